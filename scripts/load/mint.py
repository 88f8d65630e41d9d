#!/usr/bin/env python3
"""Mints COUNT signed App Store transactions from a running server's sandbox App Store (one per line on stdout).

Usage: scripts/load/mint.py BASE_URL COUNT
"""
import http.client, json, sys, urllib.parse

base, count = sys.argv[1], int(sys.argv[2])
url = urllib.parse.urlparse(base)
connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
body = json.dumps({"product_id": "com.example.ordersafe.coins60"})
for _ in range(count):
    connection.request("POST", "/sandbox/appstore/purchase", body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    payload = json.loads(response.read())
    if response.status != 200:
        sys.exit(f"purchase failed: {response.status} {payload}")
    print(payload["signed_transaction"])
