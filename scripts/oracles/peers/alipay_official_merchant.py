"""A merchant's backend on alipay-sdk-python (Ant Group's official SDK, PyPI), pointed at an Alipay sandbox gateway.

Usage: alipay_official_merchant.py SANDBOX_FOLDER < operations.json   (prints a JSON list of results)

Configured from what the sandbox writes in its folder (alipay-app.json and the key files) as a merchant configures
it from the keys it uploaded to and downloaded from Alipay: `server_url` is the sandbox's gateway. The SDK sends the
common parameters (app_id, method, sign, …) in the URL's query string and `biz_content` in the POST body, and verifies
every answer's signature itself (it raises when one fails). One part of it is replaced: its HTTP helper
(`WebUtils.get_http_connection`) connects to port 80 or 443 whatever the URL says and adds the URL's port to a string
as an integer (a TypeError), so a gateway on another port is unreachable; the replacement connects to the URL's own
host and port and leaves the request, its signature and the answer's verification to the SDK.

Operations:
  {"op": "query"|"close", "out_trade_no"}                   -> {"ok", "body"} (the verified response member) or
                                                                {"ok": false, "error"}
  {"op": "refund", "out_trade_no", "out_request_no", "refund_amount"}
  {"op": "refund_query", "out_trade_no", "out_request_no"}
  {"op": "bill", "date"}                                    -> {"ok", "body", "zip_names"}: the download URL queried, then
                                                                the zip fetched from it and listed
"""
import http.client, io, json, os, sys, urllib.parse, urllib.request, zipfile
from alipay.aop.api.util import WebUtils
from alipay.aop.api.AlipayClientConfig import AlipayClientConfig
from alipay.aop.api.DefaultAlipayClient import DefaultAlipayClient
from alipay.aop.api.request.AlipayDataDataserviceBillDownloadurlQueryRequest import AlipayDataDataserviceBillDownloadurlQueryRequest
from alipay.aop.api.request.AlipayTradeCloseRequest import AlipayTradeCloseRequest
from alipay.aop.api.request.AlipayTradeFastpayRefundQueryRequest import AlipayTradeFastpayRefundQueryRequest
from alipay.aop.api.request.AlipayTradeQueryRequest import AlipayTradeQueryRequest
from alipay.aop.api.request.AlipayTradeRefundRequest import AlipayTradeRefundRequest

folder = sys.argv[1]


def read(name):
    with open(os.path.join(folder, name), encoding="utf-8") as f:
        return f.read()


def bare(pem):
    """The base64 body of a PEM key: what the SDK's configuration takes."""
    return "".join(line for line in pem.splitlines() if line and not line.startswith("-----"))


def get_http_connection(url, query_string, timeout):
    parts = urllib.parse.urlparse(url)
    connection_type = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_type(host=parts.hostname, port=parts.port, timeout=timeout)
    return parts.path + "?" + query_string, connection


WebUtils.get_http_connection = get_http_connection

app = json.loads(read("alipay-app.json"))
config = AlipayClientConfig()
config.server_url = app["gateway"]
config.app_id = app["app_id"]
config.app_private_key = bare(read(app["app_private_key_file"]))
config.alipay_public_key = bare(read(app["alipay_public_key_file"]))
config.sign_type = "RSA2"
client = DefaultAlipayClient(alipay_client_config=config)


def call(request, biz):
    request.biz_content = biz
    try:
        return {"ok": True, "body": json.loads(client.execute(request))}
    except Exception as error:  # the SDK raises on a bad signature, an HTTP error or an answer of the wrong shape
        return {"ok": False, "error": str(error)[:300]}


def run(op):
    kind = op["op"]
    if kind == "query":
        return call(AlipayTradeQueryRequest(), {"out_trade_no": op["out_trade_no"]})
    if kind == "close":
        return call(AlipayTradeCloseRequest(), {"out_trade_no": op["out_trade_no"]})
    if kind == "refund":
        return call(AlipayTradeRefundRequest(), {"out_trade_no": op["out_trade_no"], "out_request_no": op["out_request_no"],
                                                 "refund_amount": op["refund_amount"]})
    if kind == "refund_query":
        return call(AlipayTradeFastpayRefundQueryRequest(), {"out_trade_no": op["out_trade_no"],
                                                             "out_request_no": op["out_request_no"]})
    if kind == "bill":
        answer = call(AlipayDataDataserviceBillDownloadurlQueryRequest(), {"bill_type": "trade", "bill_date": op["date"]})
        if not answer["ok"] or answer["body"].get("code") != "10000":
            return answer
        with urllib.request.urlopen(answer["body"]["bill_download_url"], timeout=30) as response:
            archive = zipfile.ZipFile(io.BytesIO(response.read()))
        # The names are GBK without the zip's UTF-8 flag; zipfile reads such names as code page 437.
        answer["zip_names"] = [info.filename.encode("cp437").decode("gbk") for info in archive.infolist()]
        answer["text"] = "\n".join(archive.read(info).decode("gbk") for info in archive.infolist())
        return answer
    raise SystemExit("unknown op " + kind)


print(json.dumps([run(op) for op in json.load(sys.stdin)], ensure_ascii=False))
