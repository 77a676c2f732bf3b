# Tries a TCP connection to each ADDRESS:PORT argument at once, 2 s to connect and 2 s for a first
# line, and prints one line per target: "ADDRESS:PORT connected FIRST-LINE" or "ADDRESS:PORT failed
# WHY". Addresses are numeric, so nothing is ever looked up in DNS. Only perl-base modules.
use strict;
use warnings;
use IO::Select;
use IO::Socket::INET;

for my $target (@ARGV) {
  my ($host, $port) = $target =~ /^([0-9.]+):([0-9]+)$/ or die "not address:port: $target\n";
  my $pid = fork // die "cannot fork: $!\n";
  next if $pid;
  my $socket = IO::Socket::INET->new(PeerAddr => $host, PeerPort => $port, Proto => 'tcp', Timeout => 2);
  my $result;
  if ($socket) {
    my $line = IO::Select->new($socket)->can_read(2) ? (<$socket> // '') : '';
    chomp $line;
    $result = "connected $line";
  } else {
    (my $why = $@ || "$!") =~ s/\s+/ /g;
    $result = "failed $why";
  }
  syswrite STDOUT, "$target $result\n";
  exit 0;
}
1 while wait != -1;
