/*
 * lib/export/top/top_screen.c — trc-top's ncurses screen (contract in
 * top_screen.h).  Each turn fills a table from the model, draws it and
 * waits for a key until the next 100 ms deadline, so that filling and
 * drawing do not stretch the period: ten refreshes a second at least
 * (more while keys are pressed), and a key acts at once.
 */
#include "lib/export/top/top_screen.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REFRESH_MS 100

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int on_key(int ch, top_view *v)
{
    if (ch >= '1' && ch < '1' + TOP_SORT_COUNT)
        v->sort = (top_sort)(ch - '1');
    else if (ch == 'w' || ch == 'W')
        v->since_start = !v->since_start;
    else if (ch == 'i' || ch == 'I')
        v->wall = !v->wall;
    else if (ch == 'g' || ch == 'G')
        v->gil_only = !v->gil_only;
    else if (ch == 'q' || ch == 'Q')
        return 1;
    return 0;
}

static void draw(const top_table *t, const top_view *v, const top_context *c)
{
    char lines[TOP_HEADER_MAX][TOP_LINE], line[TOP_LINE];
    int y = 0;
    erase();
    /* the header (a line per device and per device's share) takes at most
     * half a tall screen, so that rows remain */
    size_t max_header = LINES / 2 > 9 ? (size_t)(LINES / 2) : 9;
    if (max_header > TOP_HEADER_MAX)
        max_header = TOP_HEADER_MAX;
    size_t nh = top_format_header(t, v, c, lines, max_header);
    for (size_t i = 0; i < nh && y < LINES; i++)
        mvaddnstr(y++, 0, lines[i], COLS);
    if (y < LINES) {
        attron(A_DIM);
        mvaddnstr(y++, 0, top_key_help, COLS);
        attroff(A_DIM);
    }
    if (y < LINES) {
        top_format_titles(t, line, sizeof line);
        attron(A_REVERSE);
        mvaddnstr(y, 0, line, COLS);
        for (int x = (int)strlen(line); x < COLS; x++)
            mvaddch(y, x, ' ');
        attroff(A_REVERSE);
        y++;
    }
    for (size_t i = 0; i < t->n && y < LINES; i++) {
        top_format_row(t, &t->rows[i], line, sizeof line);
        mvaddnstr(y++, 0, line, COLS);
    }
    if (c->show_frames) {
        /* bottom right, over whatever row is there: the count reaches the
         * terminal with the frame it numbers */
        int len = snprintf(line, sizeof line, " frame %lu", c->frame);
        if (LINES > 0 && COLS > len)
            mvaddnstr(LINES - 1, COLS - len, line, len);
    }
    refresh();
}

int top_screen_run(top_model *m, top_view *v, top_context *c, top_status_fn status, void *arg,
                   volatile sig_atomic_t *interrupted, char *why, size_t n)
{
    /* Keys come from the terminal: standard input may be the trace. */
    FILE *keys = fopen("/dev/tty", "r");
    SCREEN *scr = keys ? newterm(NULL, stdout, keys) : NULL;
    if (!scr) {
        snprintf(why, n, "cannot use the terminal (TERM=%s)", getenv("TERM") ? getenv("TERM") : "");
        if (keys)
            fclose(keys);
        return -1;
    }
    set_term(scr);
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    top_table t;
    memset(&t, 0, sizeof t);
    int rc = 0;
    int64_t next = now_ms();
    while (!*interrupted) {
        c->status = status(arg);
        if (top_table_fill(m, v, &t) != TRC_OK) {
            snprintf(why, n, "out of memory");
            rc = -1;
            break;
        }
        c->frame++;
        draw(&t, v, c);
        int64_t now = now_ms();
        if (next <= now) {
            next += REFRESH_MS; /* on the deadlines: the period stays 100 ms */
            if (next <= now)
                next = now + REFRESH_MS; /* behind by a period: start again */
        }
        timeout((int)(next - now));
        int ch = getch();
        if (ch != ERR && on_key(ch, v))
            break;
    }
    top_table_cleanup(&t);
    endwin();
    delscreen(scr);
    fclose(keys);
    return rc;
}
