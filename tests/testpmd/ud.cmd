# UD: QPs brought up by hand, an address handle, datagrams with the
# 40-byte GRH in front of the data; then UD QPs connected by the console.
create pd 0
create mr 0 64K
create mr 0 64K
create cq 0 64
create qp 0 ud 3 3
create qp 0 ud 3 3
modify qp 4 init port=1 pkey=0 qkey=0x11111111
modify qp 4 rtr
modify qp 4 rts sq_psn=0
modify qp 5 init port=1 pkey=0 qkey=0x11111111
modify qp 5 rtr
modify qp 5 rts sq_psn=0
create ah 0 10.0.0.1

# 1 KiB with an immediate; the receive needs 40 bytes more for the GRH.
post recv 5 2 1064 count 2
post send 4 1 1K pattern inc ah 6 dqpn 0x12 qkey 0x11111111 imm 7
poll cq 3 2
dump mr 2 40 16

# A wrong Q_Key: the send completes, the datagram is dropped.
post send 4 1 64 ah 6 dqpn 0x12 qkey 0x22
poll cq 3 1
poll cq 3 timeout 100

# UD QPs connected by the console: an AH each, used when a post names none.
create qp 0 ud 3 3
create qp 0 ud 3 3
connect qp 7 8
show qp 8 connect-info
post recv 8 2 1064
post send 7 1 1000 pattern 0x5a
poll cq 3 2
dump mr 2 40 8

# What uses the PD keeps it; a destroyed AH cannot be posted to.
expect EBUSY destroy pd 0
destroy ah 6
expect ENOENT post send 4 1 64 ah 6 dqpn 0x12
