# Listens on each TCP port of @ARGV and closes every connection it accepts.
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;
my $select = IO::Select->new;
for my $port (@ARGV) {
  $select->add(IO::Socket::INET->new(LocalAddr => '0.0.0.0', LocalPort => $port, Listen => 16, ReuseAddr => 1)
    or die "cannot listen on $port: $!\n");
}
while (1) {
  for my $ready ($select->can_read) {
    my $conn = $ready->accept;
    close $conn if $conn;
  }
}
