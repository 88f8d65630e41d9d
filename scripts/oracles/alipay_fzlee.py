"""Oracle: python-alipay-sdk (fzlee). Reads a JSON list of operations on stdin, prints a JSON list of results.

Operations:
  {"op": "sign", "params": {...}, "private_key": PEM}            -> the `sign` its sign_data() produces
  {"op": "verify", "params": {...}, "sign": S, "public_key": PEM} -> its verify() (drops sign_type) result
  {"op": "verify_request", "params": {...}, "sign": S, "public_key": PEM}
                                                                  -> verifies over its own ordering, sign_type kept
  {"op": "sign_raw", "content": TEXT, "private_key": PEM}         -> its _sign() over raw text
  {"op": "verify_raw", "content": TEXT, "sign": S, "public_key": PEM} -> its _verify() over raw text
"""
import json, sys
from urllib.parse import parse_qs
from alipay import AliPay

_dummy = None


def client(private_key=None, public_key=None):
    global _dummy
    if _dummy is None:
        from Cryptodome.PublicKey import RSA
        _dummy = RSA.generate(2048)
    priv = private_key or _dummy.export_key().decode()
    pub = public_key or _dummy.publickey().export_key().decode()
    return AliPay(appid="oracle", app_private_key_string=priv, alipay_public_key_string=pub, sign_type="RSA2")


def run(op):
    kind = op["op"]
    if kind == "sign":
        signed = client(private_key=op["private_key"]).sign_data(dict(op["params"]))
        return parse_qs(signed, keep_blank_values=True)["sign"][0]
    if kind == "verify":
        try:
            return client(public_key=op["public_key"]).verify(dict(op["params"]), op["sign"])
        except Exception:
            return False
    if kind == "verify_request":
        alipay = client(public_key=op["public_key"])
        message = "&".join("{}={}".format(k, v) for k, v in alipay._ordered_data(dict(op["params"])))
        return alipay._verify(message, op["sign"])
    if kind == "sign_raw":
        return client(private_key=op["private_key"])._sign(op["content"])
    if kind == "verify_raw":
        try:
            return client(public_key=op["public_key"])._verify(op["content"], op["sign"])
        except Exception:
            return False
    raise SystemExit("unknown op " + kind)


print(json.dumps([run(op) for op in json.load(sys.stdin)]))
