# Carries connections from a Unix socket to a TCP port: perl -e "$script" SOCKET ADDRESS PORT
# Run in a network namespace, it lets a process outside reach ADDRESS:PORT there through SOCKET,
# a file both can see. Prints "ready" once it listens and stops accepting when its stdin ends
# (connections already open run to their end). Only perl-base modules.
use strict;
use warnings;
use IO::Select;
use IO::Socket::INET;
use IO::Socket::UNIX;

my ($path, $address, $port) = @ARGV;
$SIG{CHLD} = 'IGNORE';
unlink $path;
my $server = IO::Socket::UNIX->new(Local => $path, Listen => 16)
  or die "cannot listen on $path: $@\n";
serve_socket(
  $server,
  'ready',
  sub {
    my $client = $server->accept or return;
    my $pid = fork // die "cannot fork: $!\n";
    if ($pid) {
      close $client;
      return;
    }
    close $server;
    my $upstream = IO::Socket::INET->new(PeerAddr => $address, PeerPort => $port, Proto => 'tcp')
      or exit 1;
    my %other = (fileno $client => $upstream, fileno $upstream => $client);
    my $pair = IO::Select->new($client, $upstream);
    while (my @readable = $pair->can_read) {
      for my $from (@readable) {
        my $read = sysread $from, my $buffer, 65536;
        exit 0 unless $read;
        my $to = $other{fileno $from};
        for (my $done = 0; $done < $read;) {
          my $wrote = syswrite $to, $buffer, $read - $done, $done;
          exit 0 unless defined $wrote;
          $done += $wrote;
        }
      }
    }
    exit 0;
  });
