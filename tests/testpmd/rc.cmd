# Two RC QPs on one port, connected through the loopback: every RC
# operation, with patterns, then the buffers compared.
show port info all
create pd 0
create mr 0 64K
create mr 0 64K
create cq 0 256
create qp 0 rc 3 3
create qp 0 rc 3 3
connect qp 4 5
show qps

# RDMA WRITE: 4 x 4 KiB of an incrementing pattern from mr 1 into mr 2.
post write 4 1 4096 remote 2 pattern inc count 4
poll cq 3 4
verify mr 1 2 16K

# SEND with immediate into two posted receives, random data.
post recv 5 2 4096 count 2
post send 4 1 4096 pattern rand imm 0x1234 count 2
poll cq 3 4
verify mr 1 2 8K

# An inline, unsignaled SEND, then a signaled one: one completion on each side.
post recv 5 2 100 count 2
post send 4 1 100 pattern 0xa5 inline unsignaled
post send 4 1 100
poll cq 3 3
show cq 3

# RDMA READ back into a zeroed buffer.
fill mr 1 zero
post read 4 1 8K remote 2
poll cq 3 1
verify mr 1 2 8K

# Atomics on a zeroed remote word: fetch-and-add, then compare-and-swap.
fill mr 2 zero
post fadd 4 1 8 remote 2 add 5
poll cq 3 1
dump mr 2 0 8
post cas 4 1 8 remote 2 compare 5 swap 0x1122334455667788
poll cq 3 1
dump mr 2 0 8
dump mr 1 0 8

show qp 4
show qp 5 connect-info

# UC, connected side by side as with a remote peer: numbers given by hand
# (a fresh process hands out QPNs from 0x11).
create qp 0 uc 3 3 psn 100
create qp 0 uc 3 3 psn 200
connect qp 6 remote 0x14 ::ffff:10.0.0.1 200
connect qp 7 remote 0x13 10.0.0.1 100
fill mr 2 zero
post recv 7 1 0
post write 6 1 3000 remote 2 pattern inc imm 9
poll cq 3 2
verify mr 1 2 3000
show port stats 0
quit
