/*
 * lib/export/flamegraph/flame_tree.c — the folded stacks as a tree of
 * frames (contract in flamegraph.h): one node per distinct path, found
 * through the shared hash index by (parent, name), so the memory grows
 * with the distinct stacks only.  Names are kept unescaped (the folded
 * form's %XX undone): they are what the SVG shows.
 */
#include "lib/export/flamegraph/flamegraph.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/alloc.h"
#include "lib/util/grow.h"
#include "lib/util/hashtab.h"

struct exp_flame_tree {
    exp_flame_node *nodes;
    size_t n, cap;
    char *text;              /* the names, each NUL-terminated */
    size_t text_len, text_cap;
    trch_index index;        /* hash of (parent, name) → node */
    uint32_t *children;      /* after finish: node indices grouped by parent */
    char *scratch;           /* one unescaped name */
    size_t scratch_cap;
};


void exp_flame_tree_free(exp_flame_tree *t)
{
    if (!t)
        return;
    trc_free(t->nodes);
    trc_free(t->text);
    trc_free(t->children);
    trc_free(t->scratch);
    trch_index_cleanup(&t->index);
    trc_free(t);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Undoes the folded form's %XX (collapsed.h); anything else is kept. */
static size_t unescape(char *dst, const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int hi, lo;
        if (s[i] == '%' && i + 2 < n && (hi = hexval(s[i + 1])) >= 0 &&
            (lo = hexval(s[i + 2])) >= 0) {
            dst[k++] = (char)(hi << 4 | lo);
            i += 2;
        } else {
            dst[k++] = s[i];
        }
    }
    dst[k] = '\0';
    return k;
}

/* Synthetic frames are written "<...>" (no Python frames, unknown). */
static exp_flame_kind kind_of(const char *name, size_t n, int root, int gpu_leaf)
{
    if (root)
        return EXP_FLAME_OTHER;
    if (gpu_leaf)
        return EXP_FLAME_GPU;
    if (n >= 2 && name[0] == '<' && name[n - 1] == '>')
        return EXP_FLAME_OTHER;
    /* collapsed.c writes "function (file[:line])" for a frame with a file */
    if (n >= 4 && name[n - 1] == ')' && strstr(name, " ("))
        return EXP_FLAME_PYTHON;
    return EXP_FLAME_NATIVE;
}

/* The child of parent named name[0..n) (unescaped), made when missing. */
static trc_status child(exp_flame_tree *t, uint32_t parent, const char *name, size_t n,
                        exp_flame_kind kind, uint32_t *out)
{
    uint64_t h = trch_hash_more(trch_hash_u64(parent), name, n);
    trch_probe p;
    for (uint32_t i = trch_first(&t->index, h, &p); i != TRCH_NONE; i = trch_next(&t->index, &p)) {
        const exp_flame_node *c = &t->nodes[i];
        if (c->parent == parent && strcmp(t->text + c->name, name) == 0) {
            *out = i;
            return TRC_OK;
        }
    }
    if (t->n >= UINT32_MAX - 1 || t->text_len + n + 1 >= UINT32_MAX)
        return TRC_ERR_LIMIT;
    if (trcu_grow((void **)&t->nodes, &t->cap, t->n, sizeof *t->nodes) != TRC_OK ||
        trcu_grow((void **)&t->text, &t->text_cap, t->text_len + n, 1) != TRC_OK)
        return TRC_ERR_NOMEM;
    uint32_t id = (uint32_t)t->n;
    /* the root is nobody's child: it stays out of the index */
    if (id && trch_add(&t->index, h, id) != TRC_OK)
        return TRC_ERR_NOMEM;
    exp_flame_node *c = &t->nodes[t->n++];
    memset(c, 0, sizeof *c);
    c->name = (uint32_t)t->text_len;
    memcpy(t->text + t->text_len, name, n);
    t->text[t->text_len + n] = '\0';
    t->text_len += n + 1;
    c->parent = parent;
    c->depth = id ? t->nodes[parent].depth + 1 : 0;
    c->kind = (uint8_t)kind;
    *out = id;
    return TRC_OK;
}

static void charge(exp_flame_node *n, uint64_t value, uint64_t count, uint64_t ns, int idle)
{
    n->value += value;
    n->count += count;
    n->ns += ns;
    if (idle)
        n->idle += value;
}

exp_flame_tree *exp_flame_tree_new(void)
{
    exp_flame_tree *t = trc_calloc(1, sizeof *t);
    uint32_t root;
    if (t && child(t, 0, "all", 3, EXP_FLAME_OTHER, &root) != TRC_OK) {
        exp_flame_tree_free(t);
        t = NULL;
    }
    return t;
}

trc_status exp_flame_tree_add(exp_flame_tree *t, const char *stack, uint64_t value,
                              uint64_t count, uint64_t ns, int roots, int gpu_leaf, int idle)
{
    uint32_t cur = 0;
    size_t len = strlen(stack);
    if (trcu_grow((void **)&t->scratch, &t->scratch_cap, len, 1) != TRC_OK)
        return TRC_ERR_NOMEM;
    charge(&t->nodes[0], value, count, ns, idle);
    int level = 0;
    for (const char *s = stack; *s; level++) {
        const char *e = strchr(s, ';');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        size_t k = unescape(t->scratch, s, n);
        exp_flame_kind kind = kind_of(t->scratch, k, level < roots, gpu_leaf && !e);
        trc_status st = child(t, cur, t->scratch, k, kind, &cur);
        if (st != TRC_OK)
            return st;
        charge(&t->nodes[cur], value, count, ns, idle);
        if (!e)
            break;
        s = e + 1;
    }
    return TRC_OK;
}

static int by_parent_name(const void *a, const void *b, void *tree)
{
    const exp_flame_tree *t = tree;
    const exp_flame_node *x = &t->nodes[*(const uint32_t *)a], *y = &t->nodes[*(const uint32_t *)b];
    if (x->parent != y->parent)
        return x->parent < y->parent ? -1 : 1;
    return strcmp(t->text + x->name, t->text + y->name);
}

trc_status exp_flame_tree_finish(exp_flame_tree *t)
{
    size_t m = t->n - 1;
    trc_free(t->children);
    t->children = trc_malloc((m ? m : 1) * sizeof *t->children);
    if (!t->children)
        return TRC_ERR_NOMEM;
    for (size_t i = 0; i < m; i++)
        t->children[i] = (uint32_t)(i + 1);
    qsort_r(t->children, m, sizeof *t->children, by_parent_name, t);
    for (size_t i = 0; i < t->n; i++)
        t->nodes[i].nchild = 0;
    for (size_t i = m; i-- > 0;) {
        exp_flame_node *p = &t->nodes[t->nodes[t->children[i]].parent];
        p->child0 = (uint32_t)i;
        p->nchild++;
    }
    return TRC_OK;
}

uint32_t exp_flame_tree_size(const exp_flame_tree *t) { return (uint32_t)t->n; }

const exp_flame_node *exp_flame_tree_node(const exp_flame_tree *t, uint32_t i)
{
    return &t->nodes[i];
}

uint32_t exp_flame_tree_child(const exp_flame_tree *t, uint32_t i) { return t->children[i]; }

const char *exp_flame_tree_name(const exp_flame_tree *t, const exp_flame_node *n)
{
    return t->text + n->name;
}

uint32_t exp_flame_tree_find(const exp_flame_tree *t, uint32_t i, const char *name)
{
    const exp_flame_node *p = &t->nodes[i];
    uint32_t lo = p->child0, hi = p->child0 + p->nchild;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(t->text + t->nodes[t->children[mid]].name, name);
        if (c == 0)
            return t->children[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return UINT32_MAX;
}
