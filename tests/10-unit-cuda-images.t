#!/usr/bin/perl
# Runs a cmocka unit test binary with TAP output (see tests/unit/).
$ENV{CMOCKA_MESSAGE_OUTPUT} = 'TAP';
my $bin = ($ENV{GM_BUILD} // 'build') . '/tests/test_cuda_images';
exec($bin) or do { print "1..1\nnot ok 1 - cannot run $bin: $!\n"; exit 1 };
