"""Oracle: Apple's app-store-server-library (PyPI). Reads a JSON list of operations on stdin, prints a JSON list of
results: "VALID" or the VerificationStatus name it reports.

  {"op": "verify", "kind": "transaction|renewalInfo|notification|appTransaction", "jws": TEXT,
   "roots": [base64 DER], "environment": "Sandbox|Production|Xcode|LocalTesting", "bundle_id": S, "app_apple_id": N|null,
   "strict": true|false}
  strict false relaxes OpenSSL's X509_STRICT as Apple's own test suite does for its test chain, which lacks
  authority key identifiers.
  {"op": "promotional_offer", "key": PEM, "key_id", "bundle_id", "product_id", "offer_id", "application_username",
   "nonce", "timestamp"}: the library's promotional offer signature (base64 DER);
  {"op": "promotional_offer_v2", "key": PEM, "key_id", "issuer_id", "bundle_id", "product_id", "offer_id",
   "transaction_id"|null}: its compact JWS.
"""
import base64, json, sys, uuid
from appstoreserverlibrary.jws_signature_creator import PromotionalOfferV2SignatureCreator
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.promotional_offer import PromotionalOfferSignatureCreator
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException


def sign(op):
    key = op["key"].encode()
    if op["op"] == "promotional_offer":
        creator = PromotionalOfferSignatureCreator(key, op["key_id"], op["bundle_id"])
        return creator.create_signature(op["product_id"], op["offer_id"], op["application_username"],
                                        uuid.UUID(op["nonce"]), op["timestamp"])
    creator = PromotionalOfferV2SignatureCreator(key, op["key_id"], op["issuer_id"], op["bundle_id"])
    return creator.create_signature(op["product_id"], op["offer_id"], op.get("transaction_id"))


def run(op):
    if op.get("op", "verify") != "verify":
        return sign(op)
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
