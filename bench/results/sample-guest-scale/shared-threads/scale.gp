$scale << EOD
# N threadsOurs threadsTotal recvMiB mrMiB totalPerSecond forwardPerSecond backwardPerSecond
1 5 11 16.000 16.063 26.8 12.5 14.3
10 5 14 16.000 16.625 45.4 34.8 10.6
100 5 13 16.000 22.250 115.3 76.2 39.0
1000 5 12 16.000 78.500 302.8 126.0 176.7
EOD
# gnuplot scale.gp (SVG) or gnuplot -e 'fmt="png"' scale.gp, in this directory
if (!exists("fmt")) fmt = "svg"
if (fmt eq "png") {
  set terminal png size 1500,500
  set output "scale.png"
} else {
  set terminal svg size 1500,500 dynamic background rgb "white"
  set output "scale.svg"
}
set multiplot layout 1,3 title "one server, N client connections (Soft-RoCE guest)"
set logscale x
set xlabel "client connections"
set grid
set key top left
set yrange [0:*]
set title "server JVM threads"
plot $scale using 1:2 with linespoints title "rpcrdma*", $scale using 1:3 with linespoints title "all"
set title "server memory (MiB)"
plot $scale using 1:4 with linespoints title "registered receive", $scale using 1:5 with linespoints title "all MRs (rdma res)"
set title "calls/s (answered)"
plot $scale using 1:6 with linespoints title "total", $scale using 1:7 with linespoints title "forward", $scale using 1:8 with linespoints title "backward"
unset multiplot
