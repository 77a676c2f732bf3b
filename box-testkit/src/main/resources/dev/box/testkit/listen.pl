# A TCP listener for the network escape suite: perl -e "$script" stdin|forever NAME PORT ADDRESS...
# Listens on PORT (0: one the kernel picks for the first address, then the same for the others) at
# every ADDRESS, prints "port=<port>" once all listen, and answers each connection with the line
# "box-netcheck NAME ADDRESS" before closing it. With "stdin" it exits when its stdin ends, so it
# does not outlive the test process that started it. Only perl-base modules.
use strict;
use warnings;
use IO::Select;
use IO::Socket::INET;

my ($until, $name, $port, @addresses) = @ARGV;
my $select = IO::Select->new;
my %marker;
for my $address (@addresses) {
  my $socket = IO::Socket::INET->new(
    LocalAddr => $address, LocalPort => $port, Proto => 'tcp', Listen => 16, ReuseAddr => 1)
    or die "cannot listen on $address:$port: $@\n";
  $port = $socket->sockport;
  $marker{fileno $socket} = "box-netcheck $name $address";
  $select->add($socket);
}
syswrite STDOUT, "port=$port\n";
$select->add(\*STDIN) if $until eq 'stdin';
serve(
  $select,
  sub {
    my ($ready) = @_;
    my $client = $ready->accept or return;
    syswrite $client, "$marker{fileno $ready}\n";
    close $client;
  });
