# Capture and fault injection on the loopback port: RC traffic through a
# lossy TX stage still arrives whole (retransmissions), and every frame
# lands in a pcapng file.
capture start 0 @TMP@/cap.pcapng
expect EBUSY capture start 0 @TMP@/other.pcapng
create pd 0
create mr 0 64K
create mr 0 64K
create cq 0 256
create qp 0 rc 3 3
create qp 0 rc 3 3
connect qp 4 5

# Drop a tenth of the frames the port sends (the stage a loopback port uses).
expect EINVAL set fault 0 tx drop=2
set fault 0 tx drop=0.1,seed=7
show fault 0
post write 4 1 1K remote 2 pattern rand count 64
poll cq 3 64 timeout 60000
verify mr 1 2 64K
show fault 0
show qp 4

set fault 0 tx off
show fault 0
post write 4 1 1K remote 2 pattern inc count 8
poll cq 3 8
verify mr 1 2 8K
capture stop 0
show port stats 0
