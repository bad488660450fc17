/*
 * The names the data folders hold (lib/datafile.h), as the values the
 * option table suggests for a text option: model presets for --model,
 * profiles for --profile. Each fills names (at most max, sorted) and
 * returns how many; the names stay valid until the next call.
 */
#ifndef GM_DATA_NAMES_H
#define GM_DATA_NAMES_H

/* share/models/NAME.json */
int gm_model_preset_names(const char **names, int max);

/* share/profiles/NAME.ini */
int gm_profile_names(const char **names, int max);

#endif
