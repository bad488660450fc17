/* Double-precision references of the training kernels (train_ref.h). */
#include "bench/workloads/train_ref.h"

#include "bench/workloads/train_kernels.h"

#include <math.h>
#include <string.h>

void gm_ref_rope(const double *x, double *y, const float *cos_t, const float *sin_t, size_t tokens, unsigned heads,
                 unsigned dim, size_t seq, size_t pos0, double direction)
{
    const size_t half = dim / 2;
    for (size_t row = 0; row < tokens * heads; row++) {
        size_t p = pos0 + row / heads % seq;
        for (size_t c = 0; c < half; c++) {
            double cs = cos_t[p * half + c], sn = direction * sin_t[p * half + c];
            double x1 = x[row * dim + c], x2 = x[row * dim + c + half];
            y[row * dim + c] = x1 * cs - x2 * sn;
            y[row * dim + c + half] = x2 * cs + x1 * sn;
        }
    }
}

static double rms_inv(const double *x, unsigned width, double eps)
{
    double ss = 0;
    for (unsigned c = 0; c < width; c++)
        ss += x[c] * x[c];
    return 1.0 / sqrt(ss / width + eps);
}

void gm_ref_rmsnorm(const double *x, const double *w, double *y, size_t rows, unsigned width, double eps)
{
    for (size_t r = 0; r < rows; r++) {
        double inv = rms_inv(x + r * width, width, eps);
        for (unsigned c = 0; c < width; c++)
            y[r * width + c] = x[r * width + c] * inv * w[c];
    }
}

void gm_ref_rmsnorm_bwd(const double *x, const double *w, const double *dy, double *dx, double *dw, size_t rows,
                        unsigned width, double eps)
{
    if (dw)
        memset(dw, 0, width * sizeof *dw);
    for (size_t r = 0; r < rows; r++) {
        const double *xr = x + r * width, *dyr = dy + r * width;
        double inv = rms_inv(xr, width, eps), xg = 0;
        for (unsigned c = 0; c < width; c++)
            xg += xr[c] * w[c] * dyr[c];
        for (unsigned c = 0; c < width; c++) {
            if (dx)
                dx[r * width + c] = inv * w[c] * dyr[c] - xr[c] * inv * inv * inv * xg / width;
            if (dw)
                dw[c] += dyr[c] * xr[c] * inv;
        }
    }
}

static double sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }

void gm_ref_swiglu(const double *g, const double *u, double *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = g[i] * sigmoid(g[i]) * u[i];
}

void gm_ref_swiglu_bwd(const double *g, const double *u, const double *dp, double *dg, double *du, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double s = sigmoid(g[i]);
        du[i] = dp[i] * g[i] * s;
        dg[i] = dp[i] * u[i] * s * (1 + g[i] * (1 - s));
    }
}

/* Element c of query row (b, h, i), of key/value row (b, kh, j). */
#define QI(b, h, i) ((((b) * s->seq + (i)) * s->heads + (h)) * s->dim)
#define KJ(b, kh, j) ((((b) * s->seq + (j)) * s->kv_heads + (kh)) * s->dim)
#define STAT(b, h, i) (((b) * s->heads + (h)) * s->seq + (i))

static double scale_of(const gm_ref_attn_shape *s) { return s->scale > 0 ? s->scale : 1.0 / sqrt(s->dim); }

static double dot(const double *a, const double *b, unsigned n)
{
    double acc = 0;
    for (unsigned c = 0; c < n; c++)
        acc += a[c] * b[c];
    return acc;
}

void gm_ref_attn(const gm_ref_attn_shape *s, const double *q, const double *k, const double *v, double *o, double *lse)
{
    const double scale = scale_of(s);
    const size_t group = s->heads / s->kv_heads;
    for (size_t b = 0; b < s->batch; b++)
        for (size_t h = 0; h < s->heads; h++)
            for (size_t i = 0; i < s->seq; i++) {
                size_t last = s->causal ? i : s->seq - 1, kh = h / group;
                double m = -INFINITY, sum = 0;
                for (size_t j = 0; j <= last; j++)
                    m = fmax(m, dot(q + QI(b, h, i), k + KJ(b, kh, j), s->dim) * scale);
                double *out = o + QI(b, h, i);
                memset(out, 0, s->dim * sizeof *out);
                for (size_t j = 0; j <= last; j++) {
                    double p = exp(dot(q + QI(b, h, i), k + KJ(b, kh, j), s->dim) * scale - m);
                    sum += p;
                    for (unsigned c = 0; c < s->dim; c++)
                        out[c] += p * v[KJ(b, kh, j) + c];
                }
                for (unsigned c = 0; c < s->dim; c++)
                    out[c] /= sum;
                if (lse)
                    lse[STAT(b, h, i)] = m + log(sum);
            }
}

void gm_ref_attn_bwd(const gm_ref_attn_shape *s, const double *q, const double *k, const double *v, const double *o,
                     const double *d_o, const double *lse, double *dq, double *dk, double *dv)
{
    const double scale = scale_of(s);
    const size_t group = s->heads / s->kv_heads, tokens = s->batch * s->seq;
    memset(dq, 0, tokens * s->heads * s->dim * sizeof *dq);
    memset(dk, 0, tokens * s->kv_heads * s->dim * sizeof *dk);
    memset(dv, 0, tokens * s->kv_heads * s->dim * sizeof *dv);
    for (size_t b = 0; b < s->batch; b++)
        for (size_t h = 0; h < s->heads; h++)
            for (size_t i = 0; i < s->seq; i++) {
                const double *qi = q + QI(b, h, i), *gi = d_o + QI(b, h, i);
                double delta = dot(gi, o + QI(b, h, i), s->dim);
                size_t last = s->causal ? i : s->seq - 1, kh = h / group;
                for (size_t j = 0; j <= last; j++) {
                    size_t kj = KJ(b, kh, j);
                    double p = exp(dot(qi, k + kj, s->dim) * scale - lse[STAT(b, h, i)]);
                    double ds = p * (dot(gi, v + kj, s->dim) - delta) * scale;
                    for (unsigned c = 0; c < s->dim; c++) {
                        dq[QI(b, h, i) + c] += ds * k[kj + c];
                        dk[kj + c] += ds * qi[c];
                        dv[kj + c] += p * gi[c];
                    }
                }
            }
}

double gm_ref_xent(const double *logits, const uint32_t *targets, size_t rows, unsigned vocab, double scale,
                   double *loss, double *dlogits)
{
    double total = 0;
    size_t counted = 0;
    for (size_t r = 0; r < rows; r++) {
        const double *z = logits + r * vocab;
        double m = z[0], sum = 0;
        for (unsigned j = 1; j < vocab; j++)
            m = fmax(m, z[j]);
        for (unsigned j = 0; j < vocab; j++)
            sum += exp(z[j] - m);
        double lse = m + log(sum);
        bool ignore = targets[r] == GM_TRAIN_IGNORE;
        double l = ignore ? 0 : lse - z[targets[r]];
        if (loss)
            loss[r] = l;
        total += l;
        counted += !ignore;
        for (unsigned j = 0; dlogits && j < vocab; j++)
            dlogits[r * vocab + j] = ignore ? 0 : (exp(z[j] - lse) - (j == targets[r])) * scale;
    }
    return counted ? total / (double)counted : 0;
}

void gm_ref_embed(const double *e, const uint32_t *tokens, double *x, size_t n, unsigned hidden)
{
    for (size_t t = 0; t < n; t++)
        memcpy(x + t * hidden, e + (size_t)tokens[t] * hidden, hidden * sizeof *x);
}

void gm_ref_embed_bwd(const double *dx, const uint32_t *tokens, double *de, size_t n, unsigned hidden, size_t vocab)
{
    memset(de, 0, vocab * hidden * sizeof *de);
    for (size_t t = 0; t < n; t++)
        for (unsigned c = 0; c < hidden; c++)
            de[(size_t)tokens[t] * hidden + c] += dx[t * hidden + c];
}

/* The 16 NF4 levels (train.cl's table). */
static const double nf4_levels[16] = {-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
                                      -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
                                      0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
                                      0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
                                      0.7229568362236023, 1.0};

/* The index of the value of table[0..n) nearest to x (the first of a tie). */
static unsigned nearest(const double *table, const float *ftable, unsigned n, double x)
{
    unsigned best = 0;
    for (unsigned i = 1; i < n; i++)
        if (fabs((table ? table[i] : ftable[i]) - x) < fabs((table ? table[best] : ftable[best]) - x))
            best = i;
    return best;
}

void gm_ref_nf4_quantize(const double *w, size_t n, const float *code2, uint8_t *codes, uint8_t *absmax_q,
                         float *scale2, float *offset)
{
    size_t blocks = n / 64;
    double mean = 0;
    for (size_t bl = 0; bl < blocks; bl++) {
        double am = 0;
        for (size_t i = 0; i < 64; i++)
            am = fmax(am, fabs(w[bl * 64 + i]));
        mean += am / (double)blocks;
    }
    *offset = (float)mean;
    /* The absmax values less their mean, in blocks of 256 against code2. */
    for (size_t g = 0; g * 256 < blocks; g++) {
        double am2 = 0, am[256];
        size_t end = blocks - g * 256 < 256 ? blocks - g * 256 : 256;
        for (size_t bl = 0; bl < end; bl++) {
            double a = 0;
            for (size_t i = 0; i < 64; i++)
                a = fmax(a, fabs(w[(g * 256 + bl) * 64 + i]));
            am[bl] = a - *offset;
            am2 = fmax(am2, fabs(am[bl]));
        }
        scale2[g] = (float)(am2 > 0 ? am2 : 1);
        for (size_t bl = 0; bl < end; bl++)
            absmax_q[g * 256 + bl] = (uint8_t)nearest(NULL, code2, 256, am[bl] / scale2[g]);
    }
    memset(codes, 0, n / 2);
    for (size_t bl = 0; bl < blocks; bl++) {
        /* Quantised against the absmax the kernel will use. */
        double am = (double)code2[absmax_q[bl]] * scale2[bl / 256] + *offset;
        for (size_t i = 0; i < 64; i++) {
            size_t e = bl * 64 + i;
            unsigned c = nearest(nf4_levels, NULL, 16, am > 0 ? w[e] / am : 0);
            codes[e / 2] |= (uint8_t)(e & 1 ? c : c << 4);
        }
    }
}

void gm_ref_nf4_dequant(const uint8_t *codes, const uint8_t *absmax_q, const float *code2, const float *scale2,
                        float offset, double *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned nib = i & 1 ? codes[i / 2] & 15u : codes[i / 2] >> 4;
        double am = (double)code2[absmax_q[i / 64]] * scale2[i / 64 / 256] + offset;
        out[i] = nf4_levels[nib] * am;
    }
}

void gm_ref_adamw(double *w, const double *g, double *master, double *m, double *v, size_t n, unsigned step,
                  double lr, double beta1, double beta2, double eps, double weight_decay)
{
    double bc1 = 1 - pow(beta1, step), bc2 = 1 - pow(beta2, step);
    for (size_t i = 0; i < n; i++) {
        m[i] = beta1 * m[i] + (1 - beta1) * g[i];
        v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i];
        double x = master ? master[i] : w[i];
        x = x - lr * weight_decay * x - lr * (m[i] / bc1) / (sqrt(v[i] / bc2) + eps);
        if (master)
            master[i] = x;
        w[i] = x;
    }
}

void gm_ref_compare(const float *got, const double *want, size_t n, double rel, double abs, gm_ref_diff *d)
{
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += want[i] * want[i];
    d->rms = n ? sqrt(ss / (double)n) : 0;
    d->off = d->worst_at = 0;
    d->worst = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - want[i]);
        if (!(e <= rel * fabs(want[i]) + abs * d->rms))
            d->off++;
        if (!(e <= d->worst)) {
            d->worst = e;
            d->worst_at = i;
        }
    }
}
