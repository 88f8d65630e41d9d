# OrderSafeKit as an Apple platform compiles it, on Linux (Swift on Linux never compiles an `#if os(iOS)` branch):
# the SDK's sources with `os(X)` rewritten to a `-D OS_X` condition and `compiler(>=6.2)` to `COMPILER_6_2`, and the
# modules they import there built from stand-ins: StoreKitStandIn for StoreKit, scripts/checks/platform-check.d/ for
# the few UIKit, Combine and SwiftUI names the SDK and the paywall sample use. Used by scripts/checks/platform-check
# (every platform's branches type-checked) and scripts/checks/api-check (the public API as iOS sees it).
# Usage: source scripts/lib/sdk-platforms.sh (from the repository's root; the root package built)
sdk_platform_bin=$(swift build --show-bin-path)
sdk_platform_modules="$sdk_platform_bin/Modules"
sdk_platform_accessor="$sdk_platform_bin/OrderSafeKit.build/DerivedSources/resource_bundle_accessor.swift"

# sdk_platform_sources WORK: the SDK's sources, rewritten, in WORK/src; fails when the package is not built.
sdk_platform_sources() {
  [ -d "$sdk_platform_modules" ] && [ -f "$sdk_platform_accessor" ] || { echo "build the package first (swift build)" >&2; return 1; }
  local file
  mkdir -p "$1/src"
  while IFS= read -r -d '' file; do
    sed -E 's/os\((iOS|macOS|tvOS|watchOS|visionOS|Linux)\)/OS_\1/g; s/compiler\(>=6\.2\)/COMPILER_6_2/g' "$file" \
      >"$1/src/$(echo "${file#Sources/OrderSafeKit/}" | tr '/' '_')"
  done < <(find Sources/OrderSafeKit -name '*.swift' -print0)
}

# sdk_platform_standins WORK COMPILER: the stand-ins' modules for COMPILER_6_2 or OLDER (Xcode 16) in WORK/COMPILER.
sdk_platform_standins() {
  local out="$1/$2"
  mkdir -p "$out"
  sed -E 's/compiler\(>=6\.2\)/COMPILER_6_2/g' Sources/StoreKitStandIn/*.swift >"$out/StoreKitStandIn.swift"
  swiftc -parse-as-library -swift-version 6 -module-name StoreKitStandIn -emit-module -D "$2" \
    -emit-module-path "$out/StoreKitStandIn.swiftmodule" "$out/StoreKitStandIn.swift"
  swiftc -parse-as-library -swift-version 6 -module-name UIKit -emit-module -I "$out" \
    -emit-module-path "$out/UIKit.swiftmodule" scripts/checks/platform-check.d/UIKit.swift
  swiftc -parse-as-library -swift-version 6 -module-name Combine -emit-module \
    -emit-module-path "$out/Combine.swiftmodule" scripts/checks/platform-check.d/Combine.swift
  swiftc -parse-as-library -swift-version 6 -module-name SwiftUI -emit-module -I "$out" \
    -emit-module-path "$out/SwiftUI.swiftmodule" scripts/checks/platform-check.d/SwiftUI.swift
}

# sdk_platform_swiftc WORK PLATFORM COMPILER ARGUMENT...: swiftc over the rewritten sources as OrderSafeKit with
# PLATFORM's and COMPILER's branches, the stand-ins of sdk_platform_standins WORK COMPILER imported.
sdk_platform_swiftc() {
  local work=$1 platform=$2 compiler=$3
  shift 3
  swiftc -parse-as-library -swift-version 6 -module-name OrderSafeKit -package-name orderSafeKit \
    -I "$work/$compiler" -I "$sdk_platform_modules" -D "OS_$platform" -D "$compiler" "$@" \
    "$work"/src/*.swift "$sdk_platform_accessor"
}
