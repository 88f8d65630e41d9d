"""Oracle: wechatpayv3 (PyPI). Reads a JSON list of operations on stdin, prints a JSON list of results.

Operations (keys are PEM text; the merchant key is PKCS#8):
  {"op": "authorization", "method", "path", "body", "nonce", "mchid", "serial_no", "private_key"}
      -> {"header": its Authorization header, "timestamp": the timestamp it used}
  {"op": "app_sign", "appid", "timestamp", "noncestr", "prepayid", "private_key"}
      -> the `sign` its Core.sign() makes for app payment parameters
  {"op": "decrypt_callback", "headers": {...}, "body": TEXT, "public_key", "public_key_id", "apiv3_key", "private_key"}
      -> the decrypted resource text it accepts, or null when it rejects
  {"op": "make_notification", "resource": TEXT, "timestamp", "nonce", "serial", "platform_private_key", "apiv3_key"}
      -> {"headers": {...}, "body": TEXT}: a notification built with its own primitives (rsa_sign, AES-GCM)
"""
import base64, json, os, sys
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from wechatpayv3.core import Core
from wechatpayv3.utils import build_authorization, load_private_key, rsa_sign


def core(op):
    return Core(mchid="1900000001", cert_serial_no="SERIAL", private_key=op["private_key"], apiv3_key=op["apiv3_key"],
                public_key=op["public_key"], public_key_id=op["public_key_id"])


def run(op):
    kind = op["op"]
    if kind == "authorization":
        header = build_authorization(op["path"], op["method"], op["mchid"], op["serial_no"], load_private_key(op["private_key"]),
                                     data=op["body"] or None, nonce_str=op["nonce"])
        timestamp = header.split('timestamp="')[1].split('"')[0]
        return {"header": header, "timestamp": int(timestamp)}
    if kind == "app_sign":
        key = load_private_key(op["private_key"])
        return rsa_sign(key, "\n".join([op["appid"], op["timestamp"], op["noncestr"], op["prepayid"]]) + "\n")
    if kind == "decrypt_callback":
        try:
            return core(op).decrypt_callback(op["headers"], op["body"])
        except Exception:
            return None
    if kind == "make_notification":
        nonce = os.urandom(6).hex()
        ciphertext = AESGCM(op["apiv3_key"].encode()).encrypt(nonce.encode(), op["resource"].encode(), b"transaction")
        body = json.dumps({
            "id": "EV-ORACLE", "create_time": "2026-11-22T14:00:00+08:00", "resource_type": "encrypt-resource",
            "event_type": "TRANSACTION.SUCCESS", "summary": "支付成功",
            "resource": {"original_type": "transaction", "algorithm": "AEAD_AES_256_GCM", "ciphertext": base64.b64encode(ciphertext).decode(),
                         "associated_data": "transaction", "nonce": nonce}}, ensure_ascii=False)
        key = load_private_key(op["platform_private_key"])
        signature = rsa_sign(key, "%s\n%s\n%s\n" % (op["timestamp"], op["nonce"], body))
        return {"headers": {"Wechatpay-Timestamp": str(op["timestamp"]), "Wechatpay-Nonce": op["nonce"], "Wechatpay-Signature": signature,
                            "Wechatpay-Serial": op["serial"], "Wechatpay-Signature-Type": "WECHATPAY2-SHA256-RSA2048"},
                "body": body}
    raise SystemExit("unknown op " + kind)


print(json.dumps([run(op) for op in json.load(sys.stdin)], ensure_ascii=False))
