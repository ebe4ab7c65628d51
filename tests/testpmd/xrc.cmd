# A shared XRC target QP: one XRC domain opened twice through a file, an
# XRC SRQ, a target QP with two more handles (ibv_open_qp), closed in
# another order than opened, and traffic from an XRC initiator.
create pd 0
create mr 0 64K
create mr 0 64K
create cq 0 64
create cq 0 64
create xrcd 0 @TMP@/xrcd
create xrcd 0 @TMP@/xrcd
create srq 0 16 xrc 5 4
create qp - xrc_recv - - xrcd 5
create qp 0 xrc_send 3 -
open qp 6 qp 8
open qp 5 0x11
show qps
connect qp 9 8

# The creator lets go first: the opened handles keep the QP.
close qp 8
post recv 7 2 4096
post send 9 1 4096 pattern inc srq 7
poll cq 3 1
poll cq 4 1
verify mr 1 2 4096
show qp 10

# One handle more gone; the last one still works.
close qp 11
post recv 7 2 4096
post send 9 1 4096 pattern rand srq 7
poll cq 3 1
poll cq 4 1
verify mr 1 2 4096

# A wrong SRQ number: the target refuses the request.
post send 9 1 64 srqn 0x999
poll cq 3 1

# The domain is busy while its SRQ and QP live; the last handle takes the QP.
destroy xrcd 6
expect EBUSY destroy xrcd 5
close qp 10
expect ENOENT open qp 5 0x11
destroy qp 9
destroy srq 7
destroy xrcd 5
show qps
