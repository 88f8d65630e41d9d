"""Oracle: Apple's app-store-server-library (PyPI). Reads a JSON list of operations on stdin, prints a JSON list of
results: "VALID" or the VerificationStatus name it reports.

  {"op": "verify", "kind": "transaction|renewalInfo|notification|appTransaction", "jws": TEXT,
   "roots": [base64 DER], "environment": "Sandbox|Production|Xcode|LocalTesting", "bundle_id": S, "app_apple_id": N|null,
   "strict": true|false}
  strict false relaxes OpenSSL's X509_STRICT as Apple's own test suite does for its test chain, which lacks
  authority key identifiers.
"""
import base64, json, sys
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException


def run(op):
    verifier = SignedDataVerifier([base64.b64decode(r) for r in op["roots"]], False, Environment(op["environment"]),
                                  op["bundle_id"], op.get("app_apple_id"))
    if not op.get("strict", True):
        verifier._chain_verifier.enable_strict_checks = False
    method = {"transaction": verifier.verify_and_decode_signed_transaction,
              "renewalInfo": verifier.verify_and_decode_renewal_info,
              "notification": verifier.verify_and_decode_notification,
              "appTransaction": verifier.verify_and_decode_app_transaction}[op["kind"]]
    try:
        method(op["jws"])
        return "VALID"
    except VerificationException as error:
        return error.status.name
    except Exception as error:  # a crash in the library is a refusal too, but say which
        return "EXCEPTION:" + type(error).__name__


print(json.dumps([run(op) for op in json.load(sys.stdin)]))
