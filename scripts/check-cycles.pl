#!/usr/bin/perl
# Checks that no circle runs between source files: file A uses a function
# or variable that file B defines while B, directly or through others,
# uses one of A's. Reads the objects of a build (nm), so it sees calls, not
# only includes. Prints each circle as its files, "a.c <-> b.c <-> ...",
# and exits 1 if there is one (0 if none, 2 on bad usage).
#   scripts/check-cycles.pl BUILD_DIR     (e.g. build: its src, bench, stress)
# Run from the source tree's root: an object whose source is not there (a
# file since deleted) is passed over.
use strict;
use warnings;

my $build = shift or do { print STDERR "usage: scripts/check-cycles.pl BUILD_DIR\n"; exit 2 };
-d $build or do { print STDERR "check-cycles: no folder $build\n"; exit 2 };
my @objs = grep { m{^\Q$build\E/(src|bench|stress)/} } split /\n/, `find '$build' -name '*.o' | sort`;
@objs or do { print STDERR "check-cycles: no objects under $build/src, bench or stress: build first\n"; exit 2 };

my (%defines, %uses);
for my $o (@objs) {
    (my $file = $o) =~ s{^\Q$build\E/}{};
    $file =~ s/\.o$/.c/;
    next if !-e $file;      # an object left behind by a deleted source
    for (split /\n/, `nm '$o'`) {
        if (/^\s+U (\S+)/) { $uses{$file}{$1} = 1 }
        elsif (/^[0-9a-f]+ [TDBRC] (\S+)/) { $defines{$1} = $file }
    }
}
my %edge;
for my $f (keys %uses) {
    for my $sym (keys %{ $uses{$f} }) {
        my $d = $defines{$sym};
        $edge{$f}{$d} = 1 if $d && $d ne $f;
    }
}

# Tarjan's strongly connected components: each of more than one file is a circle.
my ($next, %index, %low, %on_stack, @stack, @circles) = (0);
sub visit {
    my $v = shift;
    $index{$v} = $low{$v} = $next++;
    push @stack, $v;
    $on_stack{$v} = 1;
    for my $w (sort keys %{ $edge{$v} || {} }) {
        if (!defined $index{$w}) {
            visit($w);
            $low{$v} = $low{$w} if $low{$w} < $low{$v};
        } elsif ($on_stack{$w}) {
            $low{$v} = $index{$w} if $index{$w} < $low{$v};
        }
    }
    return if $low{$v} != $index{$v};
    my @c;
    my $w;
    do { $w = pop @stack; $on_stack{$w} = 0; push @c, $w } while ($w ne $v);
    push @circles, [sort @c] if @c > 1;
}
for my $v (sort keys %edge) { visit($v) unless defined $index{$v} }
print join(' <-> ', @$_), "\n" for sort { $a->[0] cmp $b->[0] } @circles;
exit(@circles ? 1 : 0);
