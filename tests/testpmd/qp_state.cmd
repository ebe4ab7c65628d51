# Poke the QP state machine with modifies the IB spec refuses: each must
# fail with EINVAL, leave the QP as it was, and the console carry on.
create pd 0
create cq 0 64
create qp 0 rc 1 1
query qp 2

# RESET: only INIT is next, and INIT needs its attributes.
expect EINVAL modify qp 2 rts
expect EINVAL modify qp 2 rtr
expect EINVAL modify qp 2 err
expect EINVAL modify qp 2 init
expect EINVAL modify qp 2 init port=1 pkey=0
expect EINVAL modify qp 2 init port=2 pkey=0 access=lw,rw
expect EINVAL modify qp 2 init port=1 pkey=0 access=lw qkey=7
modify qp 2 init port=1 pkey=0 access=lw,rw,rr,ra

# INIT to RTR needs the path: address, MTU, remote QPN and PSN, responder resources.
expect EINVAL modify qp 2 rtr
expect EINVAL modify qp 2 rtr mtu=1024 dqpn=0x12 rq_psn=0 max_dest_rd=1 min_rnr=12
expect EINVAL modify qp 2 rtr mtu=1024 dqpn=0x12 rq_psn=0 dgid=::ffff:10.0.0.1 sgid_index=9 max_dest_rd=1 min_rnr=12
modify qp 2 rtr mtu=1024 dqpn=0x12 rq_psn=0 dgid=::ffff:10.0.0.1 sgid_index=1 max_dest_rd=1 min_rnr=12

# RTR to RTS needs the requester's attributes, with sane values.
expect EINVAL modify qp 2 rts sq_psn=0
expect EINVAL modify qp 2 rts sq_psn=0 timeout=14 retry=7 rnr_retry=7 max_rd=129
modify qp 2 rts sq_psn=0 timeout=14 retry=7 rnr_retry=7 max_rd=1

# In RTS: only some attributes change, and RTR is behind us.
expect EINVAL modify qp 2 - dqpn=5
modify qp 2 - min_rnr=5
expect EINVAL modify qp 2 rtr
modify qp 2 sqd
modify qp 2 rts
modify qp 2 err
modify qp 2 reset
show qp 2

# UD: a Q_Key at INIT, no access flags.
create qp 0 ud 1 1
expect EINVAL modify qp 3 init port=1 pkey=0
expect EINVAL modify qp 3 init port=1 pkey=0 qkey=7 access=lw
modify qp 3 init port=1 pkey=0 qkey=7

# Mistakes the console reports, and goes on after.
modify qp 99 init
create mr 0 lots
frobnicate
expect EBUSY modify qp 2 rts

# Objects in use cannot go.
expect EBUSY destroy pd 0
expect EBUSY destroy cq 1
expect ENOENT destroy qp 42
destroy qp 2
destroy qp 3
destroy cq 1
destroy pd 0
show qps
