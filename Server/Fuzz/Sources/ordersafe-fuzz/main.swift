import CFuzzerDriver
import Foundation

// SwiftPM gives an executable its own entry point, so libFuzzer's `main` is not used: this one hands libFuzzer's
// driver the command line and the target (``fuzzOneInput(_:_:)``).
// The target's fixed keys and verifiers are built before fuzzing starts, so no input is charged with them.
FuzzTarget.selected.run([])
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(
    LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        guard let data else { return 0 }
        return fuzzOneInput(data, size)
    })
