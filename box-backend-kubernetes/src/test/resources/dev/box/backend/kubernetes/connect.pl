# Prints how a TCP connection to address $ARGV[0], port $ARGV[1] ends: "connected", "refused" (no
# listener), "denied: <reason>" (a rejecting or dropping filter, or no route) or "no answer".
use strict;
use warnings;
use Socket;
socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!\n";
local $SIG{ALRM} = sub { print "no answer\n"; exit 0; };
alarm 10;
if (connect($s, sockaddr_in($ARGV[1], inet_aton($ARGV[0])))) {
  print "connected\n";
} elsif ($!{ECONNREFUSED}) {
  print "refused\n";
} else {
  print "denied: $!\n";
}
