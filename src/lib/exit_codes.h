/* The process exit statuses every command shares: 0 success, 1 a check
 * failed, 2 bad usage or input, 3 no usable device (or it failed or hung),
 * 4 the results could not be written, 128 + N stopped by signal N (130
 * SIGINT, 143 SIGTERM). */
#ifndef GM_EXIT_CODES_H
#define GM_EXIT_CODES_H

enum { GM_EXIT_OK = 0, GM_EXIT_CHECK = 1, GM_EXIT_USAGE = 2, GM_EXIT_DEVICE = 3, GM_EXIT_OUTPUT = 4 };

#endif
