# json: round trips, sorting, unicode, floats, errors.
import json, collections
doc = {"name": "trellis", "tags": ["kernel", "rust", "ünïcode", "\u2603"], "n": 42, "pi": 3.141592653589793,
       "nested": {"a": [1, 2, {"b": None, "c": True}], "empty": {}}, "big": 2**70, "neg": -0.0}
s = json.dumps(doc, sort_keys=True)
print(s)
print(json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False))
back = json.loads(s)
print(back == doc, type(back["big"]).__name__, back["nested"]["a"][2])
od = json.loads('{"z": 1, "a": 2, "m": 3}', object_pairs_hook=collections.OrderedDict)
print(list(od))
for bad in ['{"a": }', '[1, 2', '"\\x"', 'nan']:
    try:
        json.loads(bad)
    except json.JSONDecodeError as e:
        print("error:", e.msg, e.pos)
print(json.dumps([1e300 * 10, float("nan")]))
print(json.dumps("\x00\x1f\"\\/"))
with open("doc.json", "w") as f:
    json.dump(doc, f)
with open("doc.json") as f:
    print(json.load(f)["tags"][3])
