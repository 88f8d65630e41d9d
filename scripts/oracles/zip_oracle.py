"""Oracle: Python's own zipfile and codecs (the standard library, run in the alipay-official venv). Reads a JSON list
of operations, prints results. Bytes travel as base64.
  {"op": "write", "files": [[NAME, B64]]}  -> B64 of a deflated zip (UTF-8 names flagged, as zipfile writes them)
  {"op": "read", "zip": B64}               -> [[NAME, UTF8_FLAG, B64]] (zipfile checks each CRC-32), or "error: ..."
  {"op": "gbk", "text": TEXT}              -> B64 of the text encoded as GBK
"""
import base64, io, json, sys, zipfile


def read(data):
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            files = []
            for info in archive.infolist():
                utf8 = bool(info.flag_bits & 0x800)
                # zipfile decodes an unflagged name as cp437: its bytes are the writer's (GBK for Alipay).
                name = info.filename if utf8 else info.filename.encode("cp437").decode("gbk")
                files.append([name, utf8, base64.b64encode(archive.read(info)).decode()])
            return files
    except Exception as error:
        return "error: " + str(error)


def run(op):
    kind = op["op"]
    if kind == "write":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, contents in op["files"]:
                archive.writestr(name, base64.b64decode(contents))
        return base64.b64encode(buffer.getvalue()).decode()
    if kind == "read":
        return read(base64.b64decode(op["zip"]))
    if kind == "gbk":
        return base64.b64encode(op["text"].encode("gbk")).decode()
    raise SystemExit("unknown op " + kind)


print(json.dumps([run(op) for op in json.load(sys.stdin)]))
