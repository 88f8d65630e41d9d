"""A merchant's backend on python-alipay-sdk (fzlee, PyPI, unmodified), pointed at an Alipay sandbox gateway.

Usage: alipay_fzlee_merchant.py SANDBOX_FOLDER < operations.json   (prints a JSON list of results)

Configured from what the sandbox writes in its folder (alipay-app.json and the PEM keys); its gateway is set through
its one attribute `_gateway` (the SDK knows only Alipay's two hosts). It calls the gateway with GET, every parameter in
the query string, and verifies each answer's signature itself.

Operations:
  {"op": "query", "out_trade_no"}                          -> {"ok", "body"} or {"ok": false, "code", "raw"}
  {"op": "refund_query", "out_trade_no", "out_request_no"}
  {"op": "query_as", "app_id", "out_trade_no"}             -> the same query sent with another app id
  {"op": "notification", "fields"}                         -> the fields signed as Alipay signs a notification (RSA2
      over the sorted fields without sign and sign_type), with the sandbox's Alipay key: {"body": form text}
"""
import json, os, sys
from urllib.parse import quote_plus
from alipay import AliPay
from alipay.exceptions import AliPayException

folder = sys.argv[1]


def read(name):
    with open(os.path.join(folder, name), encoding="utf-8") as f:
        return f.read()


app = json.loads(read("alipay-app.json"))


def client(app_id=None, private_key_file=None):
    made = AliPay(appid=app_id or app["app_id"], app_notify_url=None,
                  app_private_key_string=read(private_key_file or app["app_private_key_file"]),
                  alipay_public_key_string=read(app["alipay_public_key_file"]), sign_type="RSA2")
    made._gateway = app["gateway"]
    return made


def call(action):
    try:
        return {"ok": True, "body": action()}
    except AliPayException as error:
        # "AliPayException: code:C, message:RAW" (its fields are private).
        text = str(error)
        return {"ok": False, "code": text.split("code:", 1)[1].split(",", 1)[0], "raw": text.split("message:", 1)[1]}


def run(op):
    kind = op["op"]
    if kind == "query":
        return call(lambda: client().api_alipay_trade_query(out_trade_no=op["out_trade_no"]))
    if kind == "refund_query":
        return call(lambda: client().api_alipay_trade_fastpay_refund_query(op["out_request_no"],
                                                                          out_trade_no=op["out_trade_no"]))
    if kind == "query_as":
        return call(lambda: client(app_id=op["app_id"]).api_alipay_trade_query(out_trade_no=op["out_trade_no"]))
    if kind == "notification":
        alipay = client(private_key_file="alipay-simulator-private-key.pem")
        fields = dict(op["fields"])
        message = "&".join(f"{k}={v}" for k, v in sorted(fields.items()))
        fields["sign_type"] = "RSA2"
        fields["sign"] = alipay._sign(message)
        return {"body": "&".join(f"{k}={quote_plus(v)}" for k, v in fields.items())}
    raise SystemExit("unknown op " + kind)


print(json.dumps([run(op) for op in json.load(sys.stdin)], ensure_ascii=False))
