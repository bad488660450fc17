/*
 * The bash completion (help_pages.h: gm_help_completion_bash): a script
 * written from the command and option tables. Its words are the tables'
 * own: command names, each command's options, the allowed values of
 * enumerations and lists, and the names text options suggest (model
 * presets, profiles) as the data folders hold them when it is written.
 */
#include "cli/help_pages.h"
#include "cli/option_table.h"
#include "lib/datafile.h"

#include <string.h>

#define MAX_WORDS 128

/* Whether a word can stand unquoted in the script (single quotes around a
 * list of them, no quoting inside). */
static bool plain_word(const char *w)
{
    return *w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-") == strlen(w);
}

/* Writes opt's values, each after a space. */
static void values(FILE *f, const gm_option *opt)
{
    const char *names[MAX_WORDS];
    int n = opt->values ? opt->values(names, MAX_WORDS) : 0;
    for (int i = 0; i < n; i++)
        if (plain_word(names[i]))
            fprintf(f, " %s", names[i]);
}

/* How an option takes its value, the first word of _gpumem_value's line. */
static const char *how(const gm_option *opt)
{
    switch (opt->kind) {
    case GM_OPTARG_ENUM:
        return "one";
    case GM_OPTARG_LIST:
        return "list";
    case GM_OPTARG_TEXT:
        return opt->files == GM_FILES_DIR ? "dir" : opt->files == GM_FILES_ANY ? "path" : opt->values ? "one" : "word";
    default:
        return "word";
    }
}

static void value_function(FILE *f, const gm_command *const *commands)
{
    fputs("# _gpumem_value CMD OPTION: how OPTION of command CMD takes its value, then\n"
          "# the words to offer: one (one of them), list (a comma-separated list of\n"
          "# them), path (a file or folder, or one of them), dir (a folder), word\n"
          "# (anything: nothing to offer). Fails for a flag or an unknown option.\n"
          "_gpumem_value() {\n    case \"$1 $2\" in\n", f);
    for (int k = 0; commands[k]; k++) {
        const gm_command *c = commands[k];
        if (!c->options || c->hidden)
            continue;
        size_t i = 0;
        for (const gm_option *opt; (opt = gm_option_next(c->options, &i));) {
            if (opt->kind == GM_OPTARG_FLAG)
                continue;
            fprintf(f, "    '%s --%s') echo '%s", c->name, opt->name, how(opt));
            values(f, opt);
            fputs("' ;;\n", f);
        }
    }
    fputs("    *) return 1 ;;\n    esac\n}\n\n", f);
}

static void options_function(FILE *f, const gm_command *const *commands)
{
    fputs("# _gpumem_options CMD: the options of command CMD.\n"
          "_gpumem_options() {\n    case $1 in\n", f);
    for (int k = 0; commands[k]; k++) {
        const gm_command *c = commands[k];
        if (!c->options || c->hidden)
            continue;
        fprintf(f, "    %s) echo '", c->name);
        size_t i = 0;
        for (const gm_option *opt; (opt = gm_option_next(c->options, &i));)
            fprintf(f, "--%s ", opt->name);
        fputs("--help' ;;\n", f);
    }
    fputs("    *) echo '--help' ;;\n    esac\n}\n\n", f);
}

/* The visible commands, space-separated; and those whose positional
 * arguments are `kind`, as a case pattern ("plot|fleet"; "" if none). */
static void command_words(FILE *f, const gm_command *const *commands, int by_kind, gm_positional kind)
{
    int first = 1;
    for (int k = 0; commands[k]; k++) {
        const gm_command *c = commands[k];
        if (c->hidden || (by_kind && c->positional != kind))
            continue;
        fprintf(f, "%s%s", first ? "" : by_kind ? "|" : " ", c->name);
        first = 0;
    }
}

int gm_help_completion_bash(FILE *f, const gm_command *const *commands)
{
    char refs[MAX_WORDS][GM_DATA_NAME_LEN];
    int n_refs = gm_data_file_names("reference", NULL, refs, MAX_WORDS);
    fputs("# bash completion for gpumem, written by `gpumem help --completion bash`\n"
          "# from its command and option tables.\n\n", f);
    value_function(f, commands);
    options_function(f, commands);
    fputs("# The reference runs compare takes as reference:NAME.\n_gpumem_references='", f);
    for (int i = 0, first = 1; i < n_refs; i++)
        if (plain_word(refs[i])) {
            fprintf(f, "%s%s", first ? "" : " ", refs[i]);
            first = 0;
        }
    fputs("'\n\n", f);
    fputs("_gpumem() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev= cmd=${COMP_WORDS[1]-} spec how words head= r\n"
          "    COMPREPLY=()\n"
          "    if ((COMP_CWORD == 1)); then\n"
          "        COMPREPLY=($(compgen -W '", f);
    command_words(f, commands, 0, GM_POSITIONAL_NONE);
    fputs("' -- \"$cur\"))\n"
          "        return 0\n"
          "    fi\n"
          "    prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    # --name=value: bash splits the word at '=' (COMP_WORDBREAKS).\n"
          "    if [[ $cur == = ]]; then\n"
          "        cur=\n"
          "    elif [[ $prev == = ]] && ((COMP_CWORD >= 3)); then\n"
          "        prev=${COMP_WORDS[COMP_CWORD-2]}\n"
          "    fi\n"
          "    if [[ $prev == --* ]] && spec=$(_gpumem_value \"$cmd\" \"$prev\"); then\n"
          "        read -r how words <<<\"$spec\"\n"
          "        case $how in\n"
          "        one) COMPREPLY=($(compgen -W \"$words\" -- \"$cur\")) ;;\n"
          "        list)\n"
          "            [[ $cur == *,* ]] && head=${cur%,*},\n"
          "            COMPREPLY=($(compgen -W \"$words\" -P \"$head\" -- \"${cur##*,}\")) ;;\n"
          "        path)\n"
          "            compopt -o filenames 2>/dev/null\n"
          "            COMPREPLY=($(compgen -W \"$words\" -- \"$cur\") $(compgen -f -- \"$cur\")) ;;\n"
          "        dir)\n"
          "            compopt -o filenames 2>/dev/null\n"
          "            COMPREPLY=($(compgen -d -- \"$cur\")) ;;\n"
          "        esac\n"
          "        return 0\n"
          "    fi\n"
          "    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$(_gpumem_options \"$cmd\")\" -- \"$cur\"))\n"
          "        return 0\n"
          "    fi\n"
          "    case $cmd in\n    ", f);
    command_words(f, commands, 1, GM_POSITIONAL_RUN);
    fputs(")\n"
          "        # reference:NAME, which bash splits at ':' (COMP_WORDBREAKS) or not\n"
          "        if [[ $cur == : && $prev == reference ]]; then\n"
          "            COMPREPLY=($_gpumem_references)\n"
          "        elif [[ $prev == : ]] && ((COMP_CWORD >= 3)) && [[ ${COMP_WORDS[COMP_CWORD-2]} == reference ]]; then\n"
          "            COMPREPLY=($(compgen -W \"$_gpumem_references\" -- \"$cur\"))\n"
          "        else\n"
          "            compopt -o filenames 2>/dev/null\n"
          "            for r in $_gpumem_references; do words=\"${words-} reference:$r\"; done\n"
          "            COMPREPLY=($(compgen -d -- \"$cur\") $(compgen -W \"${words-}\" -- \"$cur\"))\n"
          "        fi ;;\n    ", f);
    command_words(f, commands, 1, GM_POSITIONAL_DIR);
    fputs(")\n"
          "        compopt -o filenames 2>/dev/null\n"
          "        COMPREPLY=($(compgen -d -- \"$cur\")) ;;\n    ", f);
    command_words(f, commands, 1, GM_POSITIONAL_COMMAND);
    fputs(")\n"
          "        COMPREPLY=($(compgen -W '", f);
    command_words(f, commands, 0, GM_POSITIONAL_NONE);
    fputs("' -- \"$cur\")) ;;\n"
          "    *)\n"
          "        COMPREPLY=($(compgen -W \"$(_gpumem_options \"$cmd\")\" -- \"$cur\")) ;;\n"
          "    esac\n"
          "    return 0\n"
          "}\n"
          "complete -F _gpumem gpumem\n", f);
    return ferror(f) ? -1 : 0;
}
