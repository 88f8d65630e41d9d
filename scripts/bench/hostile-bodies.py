"""Sends each hostile body once and prints the answer's time, status and first bytes (scripts/bench/hostile-bodies)."""
import json
import sys
import time
import urllib.error
import urllib.request

port, token = sys.argv[1], sys.argv[2]
N = 1 << 19
NOTIFY = 1 << 15  # under every notification endpoint's limit (64 KiB for Alipay's and WeChat Pay's), so each is read
FORM = "application/x-www-form-urlencoded"
CASES = [  # (name, path, body, content type, signed in)
    ("JWS of one letter", "/v1/appstore/transactions", json.dumps({"signed_transaction": "a" * N}), None, True),
    ("JWS of dots", "/v1/appstore/transactions", json.dumps({"signed_transaction": "." * N}), None, True),
    ("JWS of eyJ runs", "/v1/appstore/transactions",
     json.dumps({"signed_transaction": ("eyJ" + "A" * 60 + ".") * (N // 64)}), None, True),
    ("JWS with a 512 KB header", "/v1/appstore/transactions",
     json.dumps({"signed_transaction": "eyJ" + "A" * N + ".e30.AAAA"}), None, True),
    ("receipt of one letter", "/v1/appstore/transactions", json.dumps({"receipt": "A" * N}), None, True),
    ("receipt of DER-like junk", "/v1/appstore/transactions", json.dumps({"receipt": "MIA" + "gA" * (N // 2)}), None, True),
    ("JSON nested", "/v1/appstore/transactions", '{"a":' * (N // 5) + "1" + "}" * (N // 5), None, True),
    ("JSON of many members", "/v1/appstore/transactions",
     "{" + ",".join(f'"k{i}":1' for i in range(N // 10)) + "}", None, True),
    ("JSON of escapes", "/v1/appstore/transactions", '{"signed_transaction":"' + "\\u0041" * (N // 6) + '"}', None, True),
    ("JSON of one member repeated", "/v1/appstore/transactions",
     "{" + ",".join('"signed_transaction":"x"' for _ in range(N // 25)) + "}", None, True),
    ("a restore of many", "/v1/appstore/sync", json.dumps({"signed_transactions": ["a.b.c"] * (N // 10)}), None, True),
    ("product id of /a/a/…", "/v1/orders", json.dumps({"product_id": "/a" * 8192, "channel": "alipay"}), None, True),
    ("Alipay notification of many fields", "/v1/notify/alipay", "&".join(f"k{i}=v" for i in range(NOTIFY // 8)), FORM, False),
    ("Alipay notification of escapes", "/v1/notify/alipay", "a=" + "%25" * (NOTIFY // 3), FORM, False),
    ("WeChat Pay notification", "/v1/notify/wechatpay", json.dumps({"resource": {"ciphertext": "A" * NOTIFY}}), None, False),
    ("App Store notification", "/v1/notify/appstore",
     json.dumps({"signedPayload": "eyJ" + "A" * NOTIFY + ".e30.AAAA"}), None, False),
]

for name, path, body, content_type, signed_in in CASES:
    headers = {"Content-Type": content_type or "application/json"}
    if signed_in:
        headers["Authorization"] = "Bearer " + token
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=body.encode(), headers=headers, method="POST")
    start = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=300) as response:
            status, answer = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, answer = error.code, error.read()
    print(f"{(time.monotonic() - start) * 1000:9.1f} ms  {status}  {len(body):7d} bytes  {name}: {answer[:70]!r}")
