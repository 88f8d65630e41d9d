"""A merchant's backend on wechatpayv3 (PyPI, unmodified), pointed at a WeChat Pay sandbox as its gateway.

Usage: wechatpayv3_merchant.py SANDBOX_FOLDER < operations.json   (prints a JSON list of results)

The SDK is configured from what the sandbox writes in its folder (wechatpay-merchant.json and the key files), as a
merchant configures it from the files WeChat Pay hands out; its gateway is the sandbox's base URL (the SDK has no
setting for it: its one attribute `_gate_way` is set, nothing else of it is touched). In
public-key mode it is given the public key and its id; in platform-certificate mode it downloads newer certificates
itself (from the sandbox's gateway, starting from the certificate the sandbox saved as WeChat Pay's download tool
would). Every answer's signature is checked by the SDK (it raises when one fails).

Operations:
  {"op": "prepay", "out_trade_no", "total", "notify_url"}   -> {"status", "prepay_id"}
  {"op": "query", "out_trade_no"} / {"op": "query_id", "transaction_id"} -> {"status", "body"}
  {"op": "close", "out_trade_no"}                           -> {"status"}
  {"op": "refund", "out_trade_no", "out_refund_no", "refund", "total", "notify_url"} -> {"status", "body"}
  {"op": "refund_query", "out_refund_no"}                   -> {"status", "body"}
  {"op": "bill", "kind": "trade"|"fundflow", "date"}        -> {"status", "hash_ok", "text"} (the bill, gunzipped)
  {"op": "notification", "resource", "event_type"}          -> {"headers", "body"}: a notification made with the
      SDK's own primitives (rsa_sign, AEAD_AES_256_GCM) and the sandbox's signing key, as WeChat Pay would send it
"""
import base64, gzip, hashlib, json, os, sys, tempfile, time
from cryptography import x509
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from wechatpayv3 import WeChatPay, WeChatPayType
from wechatpayv3.utils import load_private_key, rsa_sign

folder = sys.argv[1]


def read(name):
    with open(os.path.join(folder, name), encoding="utf-8") as f:
        return f.read()


merchant = json.loads(read("wechatpay-merchant.json"))
apiv3_key = read(merchant["apiv3_key_file"]).strip()
public_key_mode = merchant["signing"] == "public_key"
cert_dir = None
if not public_key_mode:
    # Certificate mode: the SDK starts from the certificates in its cert_dir (WeChat Pay's CertificateDownloader saves
    # the first one there; the sandbox writes it beside its keys) and downloads newer ones from the gateway itself.
    cert_dir = tempfile.mkdtemp(prefix="wechatpayv3-certs-")
    with open(os.path.join(cert_dir, "first.pem"), "w") as f:
        f.write(read(merchant["platform_certificate_file"]))
pay = WeChatPay(
    wechatpay_type=WeChatPayType.APP, mchid=merchant["mchid"], private_key=read(merchant["merchant_private_key_file"]),
    cert_serial_no=merchant["merchant_serial"], appid=merchant["appid"], apiv3_key=apiv3_key,
    notify_url=merchant["notify_url"],
    public_key=read(merchant["public_key_file"]) if public_key_mode else None,
    public_key_id=merchant["public_key_id"] if public_key_mode else None,
    cert_dir=cert_dir, timeout=(10, 30))
pay._core._gate_way = merchant["gateway"]


def signing_serial():
    """What WeChat Pay names as the key of what it signs: the public key's id, or the platform certificate's serial."""
    if public_key_mode:
        return merchant["public_key_id"]
    certificate = x509.load_pem_x509_certificate(read(merchant["platform_certificate_file"]).encode())
    return "%X" % certificate.serial_number


def answer(result):
    status, body = result
    return {"status": status, "body": json.loads(body) if isinstance(body, str) and body.startswith("{") else body}


def run(op):
    kind = op["op"]
    if kind == "prepay":
        status, body = pay.pay(description="peer", out_trade_no=op["out_trade_no"], amount={"total": op["total"]},
                               notify_url=op["notify_url"], pay_type=WeChatPayType.APP)
        return {"status": status, "prepay_id": json.loads(body).get("prepay_id")}
    if kind == "query":
        return answer(pay.query(out_trade_no=op["out_trade_no"]))
    if kind == "query_id":
        return answer(pay.query(transaction_id=op["transaction_id"]))
    if kind == "close":
        status, _ = pay.close(out_trade_no=op["out_trade_no"])
        return {"status": status}
    if kind == "refund":
        return answer(pay.refund(out_refund_no=op["out_refund_no"], amount={"refund": op["refund"], "total": op["total"],
                                 "currency": "CNY"}, out_trade_no=op["out_trade_no"], notify_url=op["notify_url"]))
    if kind == "refund_query":
        return answer(pay.query_refund(out_refund_no=op["out_refund_no"]))
    if kind == "bill":
        if op["kind"] == "trade":
            status, body = pay.trade_bill(bill_date=op["date"])
        else:
            status, body = pay.fundflow_bill(bill_date=op["date"])
        if status != 200:
            return {"status": status, "body": body}
        listing = json.loads(body)
        status, data = pay.download_bill(url=listing["download_url"])
        if status != 200:
            return {"status": status, "body": data if isinstance(data, str) else data.decode("utf-8", "replace")}
        text = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
        return {"status": status, "hash_ok": hashlib.sha1(text).hexdigest() == listing["hash_value"],
                "text": text.decode("utf-8")}
    if kind == "notification":
        nonce = os.urandom(6).hex()
        original = "transaction" if op["event_type"].startswith("TRANSACTION") else "refund"
        ciphertext = AESGCM(apiv3_key.encode()).encrypt(nonce.encode(), op["resource"].encode(), original.encode())
        body = json.dumps({
            "id": "EV-PEER-" + os.urandom(4).hex(), "create_time": time.strftime("%Y-%m-%dT%H:%M:%S+08:00",
                                                                               time.gmtime(time.time() + 8 * 3600)),
            "resource_type": "encrypt-resource", "event_type": op["event_type"], "summary": "支付成功",
            "resource": {"original_type": original, "algorithm": "AEAD_AES_256_GCM",
                         "ciphertext": base64.b64encode(ciphertext).decode(), "associated_data": original,
                         "nonce": nonce}}, ensure_ascii=False)
        timestamp, signing_nonce = str(int(time.time())), os.urandom(16).hex()
        key = load_private_key(read("wechatpay-simulator-private-key.pem"))
        return {"headers": {"Wechatpay-Timestamp": timestamp, "Wechatpay-Nonce": signing_nonce,
                            "Wechatpay-Signature": rsa_sign(key, f"{timestamp}\n{signing_nonce}\n{body}\n"),
                            "Wechatpay-Serial": signing_serial(),
                            "Wechatpay-Signature-Type": "WECHATPAY2-SHA256-RSA2048",
                            "Content-Type": "application/json"},
                "body": body}
    raise SystemExit("unknown op " + kind)


print(json.dumps([run(op) for op in json.load(sys.stdin)], ensure_ascii=False))
