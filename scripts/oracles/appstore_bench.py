"""Times Apple's app-store-server-library verifying a transaction JWS: `appstore_bench.py DIR` reads
DIR/transaction.jws and DIR/root.der (written by `ordersafe-bench appstore --export DIR`) and prints
`python_per_second=N`. Offline mode (no OCSP), sandbox, bundle com.example.app, as ours is configured."""
import sys, time
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier

folder = sys.argv[1]
jws = open(folder + "/transaction.jws").read().strip()
root = open(folder + "/root.der", "rb").read()
verifier = SignedDataVerifier([root], False, Environment.SANDBOX, "com.example.app", None)
verifier.verify_and_decode_signed_transaction(jws)  # must verify: the comparison is only fair on valid input

best = 0.0
for _ in range(3):
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < 1.0:
        verifier.verify_and_decode_signed_transaction(jws)
        count += 1
    best = max(best, count / (time.perf_counter() - start))
print("python_per_second=%.0f" % best)
