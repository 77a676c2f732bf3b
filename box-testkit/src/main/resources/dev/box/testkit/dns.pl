# A DNS server for the network escape suite: perl -e "$script" ADDRESS NAME=IPV4...
# Answers UDP queries on ADDRESS:53: an A query for a NAME with its IPV4, any other type for a NAME
# with no records, any other name with NXDOMAIN. Prints "port=53" once it listens and exits when
# its stdin ends. Only perl-base modules.
use strict;
use warnings;
use IO::Socket::INET;

my ($address, @records) = @ARGV;
my %ipv4 = map { my ($name, $ip) = split /=/; (lc($name) =~ s/\.$//r, $ip) } @records;
my $socket = IO::Socket::INET->new(LocalAddr => $address, LocalPort => 53, Proto => 'udp')
  or die "cannot listen on $address:53: $@\n";
serve_socket(
  $socket,
  'port=53',
  sub {
    my $peer = $socket->recv(my $query, 512);
    return unless defined $peer && length $query > 12;
    my ($id, $flags) = unpack 'n n', $query;
    my ($end, @labels) = (12);
    while ($end < length $query) {
      my $length = ord substr $query, $end++, 1;
      last if $length == 0;
      push @labels, substr $query, $end, $length;
      $end += $length;
    }
    my $type = unpack 'n', substr $query, $end, 2;
    my $ip = $ipv4{lc join '.', @labels};
    # A pointer to the question's name, type A, class IN, 60 s, 4 bytes of address.
    my $answer = defined $ip && $type == 1
      ? pack('n n n N n C4', 0xC00C, 1, 1, 60, 4, split /\./, $ip) : '';
    # Response, authoritative, recursion desired as asked, recursion available; NXDOMAIN if unknown.
    my $header = pack 'n6', $id, 0x8480 | ($flags & 0x0100) | (defined $ip ? 0 : 3), 1,
      $answer ? 1 : 0, 0, 0;
    $socket->send($header . substr($query, 12, $end + 4 - 12) . $answer, 0, $peer);
  });
