#!/usr/bin/env python3
"""Creates COUNT App Store orders through the API, order k by the user of token k mod #tokens (as submit.lua sends
line k), eight keep-alive connections at once, and writes their UUIDs to OUT, line k for order k: what
`ordersafe sandbox mint --account-tokens OUT` signs transactions for, so that each is bought for its own order.

Usage: scripts/bench/load/create-orders.py URL TOKENS_FILE COUNT OUT [PRODUCT]
"""
import http.client
import json
import sys
import threading
import urllib.parse


def main():
    url, tokens_file, count, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    product = sys.argv[5] if len(sys.argv) > 5 else "coins_60"
    tokens = [line.strip() for line in open(tokens_file) if line.strip()]
    target = urllib.parse.urlsplit(url)
    body = json.dumps({"product_id": product, "channel": "appstore"})
    uuids = [None] * count
    failures = []

    def work(first):
        connection = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
        for k in range(first, count, 8):
            connection.request("POST", "/v1/orders", body, {
                "Content-Type": "application/json", "Authorization": "Bearer " + tokens[k % len(tokens)]})
            response = connection.getresponse()
            answer = response.read()
            if response.status != 201:
                failures.append(f"order {k}: HTTP {response.status} {answer[:200]!r}")
                return
            uuids[k] = json.loads(answer)["order"]["order_uuid"]
        connection.close()

    threads = [threading.Thread(target=work, args=(first,)) for first in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        sys.exit("create-orders: " + failures[0])
    with open(out, "w") as file:
        file.write("".join(uuid + "\n" for uuid in uuids))


if __name__ == "__main__":
    main()
