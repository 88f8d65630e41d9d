"""Oracle: alipay-sdk-python (Ant Group's official SDK). Reads a JSON list of operations, prints results.

Keys are the bare base64 bodies the SDK expects: PKCS#1 private keys, SPKI public keys.
  {"op": "sign", "params": {...}, "private_key": B64}             -> sign_with_rsa2(get_sign_content(params))
  {"op": "sign_raw", "content": TEXT, "private_key": B64}        -> sign_with_rsa2(content)
  {"op": "verify_raw", "content": TEXT, "sign": S, "public_key": B64} -> verify_with_rsa(...)
  {"op": "verify", "params": {...}, "sign": S, "public_key": B64}     -> the same over get_sign_content(params)
  {"op": "parse_trade_query", "content": TEXT}                  -> AlipayTradeQueryResponse's out_trade_no,
                                                                    trade_status and passback_params
"""
import json, sys
from alipay.aop.api.response.AlipayTradeQueryResponse import AlipayTradeQueryResponse
from alipay.aop.api.util.SignatureUtils import get_sign_content, sign_with_rsa2, verify_with_rsa


def verify(content, sign, public_key):
    try:
        return verify_with_rsa(public_key, content.encode("utf-8"), sign)
    except Exception:
        return False


def run(op):
    kind = op["op"]
    if kind == "sign":
        return sign_with_rsa2(op["private_key"], get_sign_content(op["params"]), "utf-8")
    if kind == "sign_raw":
        return sign_with_rsa2(op["private_key"], op["content"], "utf-8")
    if kind == "verify_raw":
        return verify(op["content"], op["sign"], op["public_key"])
    if kind == "verify":
        return verify(get_sign_content(op["params"]), op["sign"], op["public_key"])
    if kind == "parse_trade_query":
        response = AlipayTradeQueryResponse()
        response.parse_response_content(op["content"])
        return {"out_trade_no": response.out_trade_no, "trade_status": response.trade_status,
                "passback_params": response.passback_params}
    raise SystemExit("unknown op " + kind)


print(json.dumps([run(op) for op in json.load(sys.stdin)]))
