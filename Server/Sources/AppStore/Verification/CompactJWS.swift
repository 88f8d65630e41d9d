import ChannelSupport
import Foundation
@_spi(OrderSafeServer) import OrderSafeModel

/// A JWS in compact serialisation, split but not yet trusted: `header.payload.signature`, each base64url.
struct CompactJWS {
    /// `header.payload` as received: what the signature covers.
    let signingInput: ArraySlice<UInt8>
    /// The header segment as received (the key of the verified-chain cache).
    let headerSegment: ArraySlice<UInt8>
    let payload: [UInt8]
    let signature: [UInt8]

    init(_ text: some StringProtocol) throws(VerificationError) {
        let bytes = Array(text.utf8)
        let dot = UInt8(ascii: ".")
        guard let firstDot = ByteScan.firstIndex(of: dot, in: bytes[...]),
            let secondDot = ByteScan.firstIndex(of: dot, in: bytes[(firstDot + 1)...]),
            ByteScan.firstIndex(of: dot, in: bytes[(secondDot + 1)...]) == nil
        else { throw .invalidJWTFormat("not three dot-separated segments") }
        headerSegment = bytes[..<firstDot]
        signingInput = bytes[..<secondDot]
        guard let payload = Base64URL.decode(bytes[(firstDot + 1)..<secondDot]), !payload.isEmpty,
            let signature = Base64URL.decode(bytes[(secondDot + 1)...])
        else { throw .invalidJWTFormat("a segment is not base64url") }
        self.payload = payload
        self.signature = signature
    }

    /// The decoded header.
    func header() throws(VerificationError) -> [UInt8] {
        guard let header = Base64URL.decode(headerSegment), !header.isEmpty else {
            throw .invalidJWTFormat("the header is not base64url")
        }
        return header
    }
}
