import ChannelSupport
import Foundation

/// A gateway answer whose signature was checked: the `*_response` member decoded, plus its status codes.
struct AlipayGatewayResponse {
    let fields: [String: Any]
    let code: String
    let message: String
    let subCode: String?
    let subMessage: String?

    var isSuccess: Bool { code == "10000" }

    /// Reads `body`, verifying `sign` over the exact raw text of the `<method>_response` member.
    /// An unsigned answer (no `sign`, or an empty one) is accepted only as an error, never as a success.
    static func verified(body: [UInt8], method: String, credentials: AlipayCredentials) throws(AlipayGatewayError)
        -> AlipayGatewayResponse
    {
        let members: [String: ArraySlice<UInt8>]
        do {
            members = try RawJSONMembers.extract(body)
        } catch {
            throw .malformedResponse("not a JSON object (\(error))")
        }
        let name = method.replacingOccurrences(of: ".", with: "_") + "_response"
        guard let raw = members[name] ?? members["error_response"] else {
            throw .malformedResponse("no \(name) member")
        }
        // An empty `sign` is no signature: Alipay's answers quoted in python-alipay-sdk 3.4.0 (its refusals among
        // them, Tests/AlipayTests/RealSamples) carry `"sign": ""`, and are read as unsigned ones are, errors only.
        let signature = members["sign"].flatMap { try? JSONDecoder().decode(String.self, from: Data($0)) }
            .flatMap { $0.isEmpty ? nil : $0 }
        if let signature, !credentials.isAlipaySignature(signature, over: raw) { throw .badSignature }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(raw))) as? [String: Any],
            let code = object["code"] as? String
        else { throw .malformedResponse("\(name) is not an object with a code") }
        let response = AlipayGatewayResponse(
            fields: object, code: code, message: object["msg"] as? String ?? "",
            subCode: object["sub_code"] as? String, subMessage: object["sub_msg"] as? String)
        if signature == nil, response.isSuccess { throw .badSignature }
        return response
    }

    /// System errors are retried; business errors are final.
    var error: AlipayGatewayError {
        let subCode = self.subCode ?? ""
        if code == "20000" || code == "20001" || subCode.hasPrefix("aop.") || subCode.hasPrefix("isp.") {
            return .systemError(code: code, subCode: self.subCode, message: subMessage ?? message)
        }
        return .business(code: code, subCode: subCode, message: subMessage ?? message)
    }

    func string(_ name: String) -> String? { fields[name] as? String }
}
