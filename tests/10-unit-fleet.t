#!/usr/bin/perl
# Runs the fleet rule's cmocka unit tests with TAP output (tests/unit/test_fleet.c).
$ENV{CMOCKA_MESSAGE_OUTPUT} = 'TAP';
my $bin = ($ENV{GM_BUILD} // 'build') . '/tests/test_fleet';
exec($bin) or do { print "1..1\nnot ok 1 - cannot run $bin: $!\n"; exit 1 };
