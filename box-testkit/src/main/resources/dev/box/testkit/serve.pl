# The loop of the suite's servers, put before listen.pl, dns.pl and relay.pl. Only perl-base.
use strict;
use warnings;
use IO::Select;

# Calls HANDLER with each readable handle of SELECT but stdin, for ever; exits once stdin, when
# SELECT watches it, is at its end, so that the server does not outlive the process that started it.
sub serve {
  my ($select, $handler) = @_;
  while (1) {
    for my $ready ($select->can_read) {
      if (fileno($ready) == 0) {
        exit 0 unless sysread STDIN, my $ignored, 512;
        next;
      }
      $handler->($ready);
    }
  }
}

# Prints READY_LINE once SOCKET listens, then calls HANDLER for each of its events until stdin ends.
sub serve_socket {
  my ($socket, $ready_line, $handler) = @_;
  syswrite STDOUT, "$ready_line\n";
  serve(IO::Select->new($socket, \*STDIN), $handler);
}
