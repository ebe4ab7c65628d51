#!/usr/bin/env python3
# Check that the inventory in docs/verbs-programs.md ("Every verb of
# rdma-core 44") names every function <infiniband/verbs.h> declares or
# defines, and nothing else: each function in backquotes in a table row.
# Usage: check_inventory.py DOC [VERBS_H]
import re
import sys

doc = open(sys.argv[1]).read()
header = sys.argv[2] if len(sys.argv) > 2 else '/usr/include/infiniband/verbs.h'
src = re.sub(r'/\*.*?\*/', '', open(header).read(), flags=re.S)
# A function's name is the identifier before '(' that starts a line of a
# declaration or definition, after its return type ("int\nibv_x(" or
# "static inline int ibv_x(", "int __attribute_const ibv_x(").
decl = re.compile(r'(?m)^(?:\w+\s+)*\w+[\s*]+(\w*ibv\w*)\s*\(|^\s*\**(\w*ibv\w*)\s*\(')
funcs = {a or b for a, b in decl.findall(src)}

m = re.search(r'\n## Every verb of rdma-core 44\n(.*?)(\n## |\Z)', doc, flags=re.S)
if m is None:
    sys.exit('check_inventory: no "## Every verb of rdma-core 44" section')
listed = set()
for line in m.group(1).splitlines():
    if line.startswith('|'):
        listed |= set(re.findall(r'`(\w+)`', line.split('|')[1]))

missing = sorted(funcs - listed)
extra = sorted(listed - funcs)
for f in missing:
    print(f'check_inventory: {f} is in verbs.h but not in the inventory')
for f in extra:
    print(f'check_inventory: {f} is in the inventory but not in verbs.h')
print(f'check_inventory: {len(funcs)} functions in verbs.h, {len(listed)} listed')
sys.exit(1 if missing or extra else 0)
