/*
 * py_perm.c — why the kernel refused to let trec read a process, in one
 * line that names the fix that applies here (docs/trec.md "Permissions").
 *
 * Reading another process's memory needs PTRACE_MODE_ATTACH.  Which rule
 * refused it is not reported by the kernel (EPERM is all it says), so the
 * line is built from what /proc tells about both sides: trec's user and
 * CAP_SYS_PTRACE, Yama's ptrace_scope, the target's user, capabilities
 * and user namespace.  Telling root to "run as root" helps nobody: when
 * trec already has every privilege the usual fixes give, the line says
 * so and points at what is left (a security module, a sandbox, or the
 * wrong pid).
 */
#include "lib/py/py_internal.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAP_SYS_PTRACE_BIT 19

/* The "Key:\tvalue" line of /proc/PID/status (pid 0 = self), or "". */
static void status_field(pid_t pid, const char *key, char *out, size_t n)
{
    char fn[64], line[512];
    size_t k = strlen(key);
    out[0] = '\0';
    if (pid)
        snprintf(fn, sizeof fn, "/proc/%d/status", (int)pid);
    else
        snprintf(fn, sizeof fn, "/proc/self/status");
    FILE *f = fopen(fn, "re");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, k) == 0 && line[k] == ':') {
            const char *v = line + k + 1;
            while (*v == ' ' || *v == '\t')
                v++;
            snprintf(out, n, "%s", v);
            out[strcspn(out, "\n")] = '\0';
            break;
        }
    }
    fclose(f);
}

static int ns_user(pid_t pid, char *out, size_t n)
{
    char fn[64];
    if (pid)
        snprintf(fn, sizeof fn, "/proc/%d/ns/user", (int)pid);
    else
        snprintf(fn, sizeof fn, "/proc/self/ns/user");
    ssize_t k = readlink(fn, out, n - 1);
    if (k <= 0)
        return -1;
    out[k] = '\0';
    return 0;
}

/* The target's command line, words joined by spaces, cut to fit. */
static void command_of(pid_t pid, char *out, size_t n)
{
    char fn[64];
    out[0] = '\0';
    snprintf(fn, sizeof fn, "/proc/%d/cmdline", (int)pid);
    FILE *f = fopen(fn, "re");
    if (f) {
        size_t k = fread(out, 1, n - 1, f);
        fclose(f);
        out[k] = '\0';
        while (k > 0 && out[k - 1] == '\0')
            k--;
        for (size_t i = 0; i < k; i++)
            if (out[i] == '\0' || !isprint((unsigned char)out[i]))
                out[i] = ' ';
        out[k] = '\0';
    }
    if (!out[0]) {
        status_field(pid, "Name", out, n); /* kernel threads have no command line */
        if (out[0]) {
            char name[64];
            snprintf(name, sizeof name, "[%.60s]", out);
            snprintf(out, n, "%s", name);
        }
    }
}

void py_perm_facts_read(pid_t pid, py_perm_facts *f)
{
    char v[256], mine[128], theirs[128];
    memset(f, 0, sizeof *f);
    f->pid = pid;
    f->euid = geteuid();
    status_field(0, "CapEff", v, sizeof v);
    f->cap_ptrace = (strtoull(v, NULL, 16) >> CAP_SYS_PTRACE_BIT) & 1;
    f->yama = -1;
    FILE *y = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
    if (y) {
        if (fgets(v, sizeof v, y))
            f->yama = atoi(v);
        fclose(y);
    }
    f->target_uid = -1;
    status_field(pid, "Uid", v, sizeof v);
    if (v[0]) {
        unsigned long real, eff;
        if (sscanf(v, "%lu %lu", &real, &eff) == 2)
            f->target_uid = (long)eff;
    }
    status_field(pid, "CapPrm", v, sizeof v);
    uint64_t prm = strtoull(v, NULL, 16);
    status_field(0, "CapPrm", v, sizeof v);
    f->target_more_caps = (prm & ~strtoull(v, NULL, 16)) != 0;
    if (ns_user(0, mine, sizeof mine) == 0 && ns_user(pid, theirs, sizeof theirs) == 0)
        f->other_userns = strcmp(mine, theirs) != 0;
    command_of(pid, f->command, sizeof f->command);
}

/* Whether the command line names Python at all: an interpreter's path
 * ("python3.11", "/usr/bin/python3 ...") or a virtualenv's. */
static int names_python(const char *cmd)
{
    for (const char *p = cmd; *p; p++) {
        if (strncasecmp(p, "python", 6) == 0)
            return 1;
    }
    return 0;
}

static const char *scope_text(int yama)
{
    static const char *const text[] = {"0", "1", "2", "3"};
    return yama >= 0 && yama <= 3 ? text[yama] : yama < 0 ? "unset, no Yama" : "unknown";
}

void py_perm_explain(const py_perm_facts *f, char *err, size_t n)
{
    char who[128], hint[160] = "";
    size_t word = strcspn(f->command, " "); /* the program; its arguments are noise here */
    if (word)
        snprintf(who, sizeof who, "pid %d (%.*s%s)", (int)f->pid, word > 80 ? 80 : (int)word,
                 f->command, word > 80 ? "..." : "");
    else
        snprintf(who, sizeof who, "pid %d", (int)f->pid);
    if (word && !names_python(f->command))
        snprintf(hint, sizeof hint, "; its command line does not name Python: is it the "
                                    "process you meant?");
    const char *lead = "not allowed to read the memory of";

    if (f->yama == 3) {
        snprintf(err, n, "%s %s: kernel.yama.ptrace_scope=3 forbids reading other processes "
                         "to everyone, root included, until the next reboot%s", lead, who, hint);
    } else if (f->cap_ptrace && f->other_userns) {
        snprintf(err, n, "%s %s: it is in another user namespace (a container's), where trec's "
                         "CAP_SYS_PTRACE does not count: run trec inside that container%s",
                 lead, who, hint);
    } else if (f->cap_ptrace) {
        char runs_as[32] = "as root";
        if (f->euid != 0)
            snprintf(runs_as, sizeof runs_as, "as uid %ld", (long)f->euid);
        snprintf(err, n, "%s %s, although trec runs %s with CAP_SYS_PTRACE and Yama does not "
                         "restrict it (ptrace_scope: %s): something else refuses, such as a "
                         "security module (SELinux, AppArmor) or the sandbox of this machine or "
                         "container%s",
                 lead, who, runs_as, scope_text(f->yama), hint);
    } else if (f->euid == 0) {
        snprintf(err, n, "%s %s: trec runs as root but without CAP_SYS_PTRACE, which containers "
                         "drop: start the container with --cap-add SYS_PTRACE (Kubernetes: "
                         "securityContext.capabilities.add: [\"SYS_PTRACE\"])%s", lead, who, hint);
    } else if (f->target_uid >= 0 && f->target_uid != (long)f->euid) {
        snprintf(err, n, "%s %s: it runs as another user (uid %ld, trec as uid %ld): run trec as "
                         "that user with kernel.yama.ptrace_scope=0 (here: %s), or as root / with "
                         "CAP_SYS_PTRACE%s",
                 lead, who, f->target_uid, (long)f->euid, scope_text(f->yama), hint);
    } else if (f->yama == 1) {
        snprintf(err, n, "%s %s: kernel.yama.ptrace_scope=1 lets a process read only its own "
                         "children: 'sudo sysctl kernel.yama.ptrace_scope=0', or run trec as "
                         "root / with CAP_SYS_PTRACE%s", lead, who, hint);
    } else if (f->yama == 2) {
        snprintf(err, n, "%s %s: kernel.yama.ptrace_scope=2 allows it only with CAP_SYS_PTRACE: "
                         "run trec as root, or 'sudo setcap cap_sys_ptrace+ep trec'%s",
                 lead, who, hint);
    } else if (f->target_more_caps) {
        snprintf(err, n, "%s %s: it holds capabilities that trec lacks (a setuid or "
                         "file-capability program): run trec as root / with CAP_SYS_PTRACE%s",
                 lead, who, hint);
    } else {
        snprintf(err, n, "%s %s: it is of your user but not dumpable (a setuid program, or one "
                         "that called prctl(PR_SET_DUMPABLE, 0)): run trec as root / with "
                         "CAP_SYS_PTRACE (ptrace_scope: %s)%s",
                 lead, who, scope_text(f->yama), hint);
    }
}
