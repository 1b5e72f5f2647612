// SPDX-License-Identifier: MIT
/*
 * walk.c - the parallel tree walker (see walk.h) and an inode set.
 *
 * Work items live on one LIFO stack under one mutex: a directory to read
 * (its path), or a batch of entries of one directory (the directory's fd,
 * shared by reference count, and the entries' names and d_types). Reading
 * a directory pushes its subdirectories first and its batches last, so
 * batches, which hold the directory fd open, are taken first and the number
 * of open directories stays small. The walk ends when the stack is empty
 * and no worker is busy, or at the first error a callback returns.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vigil/walk.h"
#include "internal.h"

struct dirref {
	atomic_uint refs;
	int fd;			/* AT_FDCWD for the roots' pseudo-directory */
	size_t path_len;
	char path[];		/* "" for the roots */
};

enum item_kind { ITEM_DIR, ITEM_BATCH };

struct item {
	struct item *next;
	enum item_kind kind;
	unsigned int depth;	/* of the directory (ITEM_DIR) or of the entries */
	dev_t dev;		/* filesystem of the walk root */
	bool root_dev;		/* roots batch: each entry is its own filesystem */
	struct dirref *dir;	/* ITEM_BATCH */
	size_t n;		/* ITEM_BATCH: entries; each is d_type byte, name, NUL */
	size_t len;
	char data[];		/* ITEM_DIR: the path, NUL-terminated */
};

struct walk {
	const struct vg_walk_opts *o;
	vg_walk_fn fn;
	void *arg;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct item *stack;
	unsigned int busy;
	int error;		/* first negative errno; stops the walk */
};

struct worker {
	struct walk *w;
	unsigned int index;
	char *path;		/* full path of the current entry */
	size_t path_cap;
	char *names;		/* batch being filled while reading a directory */
	size_t names_len, names_cap, names_n;
};

unsigned int vg_walk_workers(const struct vg_walk_opts *o)
{
	long n = o->workers ? (long)o->workers : sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		n = 1;
	if (n > VG_WALK_MAX_WORKERS)
		n = VG_WALK_MAX_WORKERS;
	return (unsigned int)n;
}

static void dirref_put(struct dirref *d)
{
	if (d && atomic_fetch_sub(&d->refs, 1) == 1) {
		if (d->fd >= 0)
			close(d->fd);
		free(d);
	}
}

static void item_free(struct item *it)
{
	if (it->kind == ITEM_BATCH)
		dirref_put(it->dir);
	free(it);
}

static void push(struct walk *w, struct item *it)
{
	pthread_mutex_lock(&w->lock);
	it->next = w->stack;
	w->stack = it;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

static void set_error(struct walk *w, int r)
{
	pthread_mutex_lock(&w->lock);
	if (!w->error)
		w->error = r;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

static bool stopped(struct walk *w)
{
	bool s;

	pthread_mutex_lock(&w->lock);
	s = w->error != 0;
	pthread_mutex_unlock(&w->lock);
	return s;
}

/* Make wk->path = @dir "/" @name (just @name under the roots' pseudo-dir). */
static int make_path(struct worker *wk, const char *dir, size_t dlen, const char *name,
		     size_t *ret_len)
{
	size_t nlen = strlen(name);
	bool slash = dlen > 0 && dir[dlen - 1] != '/';
	size_t need = dlen + slash + nlen + 1;

	if (need > wk->path_cap) {
		size_t cap = wk->path_cap ? wk->path_cap : 4096;
		char *p;

		while (cap < need)
			cap *= 2;
		p = realloc(wk->path, cap);
		if (!p)
			return -ENOMEM;
		wk->path = p;
		wk->path_cap = cap;
	}
	memcpy(wk->path, dir, dlen);
	if (slash)
		wk->path[dlen] = '/';
	memcpy(wk->path + dlen + slash, name, nlen + 1);
	*ret_len = need - 1;
	return 0;
}

static enum vg_walk_type type_of_mode(mode_t m)
{
	if (S_ISREG(m))
		return VG_WALK_REG;
	if (S_ISDIR(m))
		return VG_WALK_DIR;
	if (S_ISLNK(m))
		return VG_WALK_LNK;
	return VG_WALK_OTHER;
}

static enum vg_walk_type type_of_dtype(unsigned char t)
{
	switch (t) {
	case DT_REG:
		return VG_WALK_REG;
	case DT_DIR:
		return VG_WALK_DIR;
	case DT_LNK:
		return VG_WALK_LNK;
	default:
		return VG_WALK_OTHER;
	}
}

static int push_dir(struct walk *w, const char *path, size_t len, unsigned int depth, dev_t dev)
{
	struct item *it = malloc(sizeof(*it) + len + 1);

	if (!it)
		return -ENOMEM;
	memset(it, 0, sizeof(*it));
	it->kind = ITEM_DIR;
	it->depth = depth;
	it->dev = dev;
	it->len = len;
	memcpy(it->data, path, len + 1);
	push(w, it);
	return 0;
}

/*
 * A directory entry that is (or may be) a directory: stat it where the
 * filesystem matters (a root: its own device; below: a mount point?),
 * unless the caller has just done so (@known), report it, and queue it.
 */
static int visit_dir(struct worker *wk, struct vg_walk_entry *e, dev_t walk_dev, bool own_dev,
		     const struct stat *known)
{
	struct walk *w = wk->w;
	struct stat st;
	int r;

	if (w->o->recursive && (own_dev || !w->o->cross_mounts)) {
		if (!known && fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			e->type = VG_WALK_ERROR;
			e->error = errno;
			r = w->fn(w->arg, e);
			return r < 0 ? r : 0;
		}
		if (!known)
			known = &st;
		if (own_dev)
			walk_dev = known->st_dev;
		else
			e->mount_point = known->st_dev != walk_dev;
	}
	r = w->fn(w->arg, e);
	if (r < 0)
		return r;
	if (r == VG_WALK_SKIP || !w->o->recursive || e->mount_point)
		return 0;
	return push_dir(w, e->path, e->path_len, e->depth, walk_dev);
}

static int run_batch(struct worker *wk, struct item *it)
{
	struct walk *w = wk->w;
	const char *p = it->data;
	const struct stat *known;
	struct stat st;
	int r = 0;

	for (size_t i = 0; i < it->n && r >= 0; i++) {
		unsigned char dt = (unsigned char)*p++;
		const char *name = p;
		struct vg_walk_entry e = {
			.dirfd = it->dir->fd,
			.name = name,
			.depth = it->depth,
			.worker = wk->index,
		};

		p += strlen(name) + 1;
		r = make_path(wk, it->dir->path, it->dir->path_len, name, &e.path_len);
		if (r < 0)
			break;
		e.path = wk->path;
		known = NULL;
		if (dt == DT_UNKNOWN) {
			if (fstatat(e.dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				e.type = VG_WALK_ERROR;
				e.error = errno;
			} else {
				e.type = type_of_mode(st.st_mode);
				known = &st;
			}
		} else {
			e.type = type_of_dtype(dt);
		}
		if (e.type == VG_WALK_DIR)
			r = visit_dir(wk, &e, it->dev, it->root_dev, known);
		else
			r = w->fn(w->arg, &e);
		if (r > 0)
			r = 0;
		if ((i & 15) == 15 && stopped(w))
			break;
	}
	return r;
}

static int names_add(struct worker *wk, unsigned char dt, const char *name)
{
	size_t nlen = strlen(name) + 1;

	if (wk->names_len + 1 + nlen > wk->names_cap) {
		size_t cap = wk->names_cap ? wk->names_cap : 4096;
		char *n;

		while (cap < wk->names_len + 1 + nlen)
			cap *= 2;
		n = realloc(wk->names, cap);
		if (!n)
			return -ENOMEM;
		wk->names = n;
		wk->names_cap = cap;
	}
	wk->names[wk->names_len++] = (char)dt;
	memcpy(wk->names + wk->names_len, name, nlen);
	wk->names_len += nlen;
	wk->names_n++;
	return 0;
}

static int flush_batch(struct worker *wk, struct dirref *d, const struct item *dir)
{
	struct item *it;

	if (!wk->names_n)
		return 0;
	it = malloc(sizeof(*it) + wk->names_len);
	if (!it)
		return -ENOMEM;
	memset(it, 0, sizeof(*it));
	it->kind = ITEM_BATCH;
	it->depth = dir->depth + 1;
	it->dev = dir->dev;
	it->dir = d;
	atomic_fetch_add(&d->refs, 1);
	it->n = wk->names_n;
	it->len = wk->names_len;
	memcpy(it->data, wk->names, wk->names_len);
	wk->names_len = wk->names_n = 0;
	push(wk->w, it);
	return 0;
}

static int report_error(struct worker *wk, const char *path, size_t len, unsigned int depth,
			int err)
{
	struct vg_walk_entry e = {
		.dirfd = AT_FDCWD,
		.name = path,
		.path = path,
		.path_len = len,
		.type = VG_WALK_ERROR,
		.error = err,
		.depth = depth,
		.worker = wk->index,
	};
	int r = wk->w->fn(wk->w->arg, &e);

	return r < 0 ? r : 0;
}

/*
 * Read one directory: subdirectories are visited (reported and queued)
 * here; every other entry goes into batches for any worker to take.
 */
static int run_dir(struct worker *wk, struct item *it)
{
	struct dirref *d;
	DIR *dp;
	int fd, r = 0;

	fd = open(it->data, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return report_error(wk, it->data, it->len, it->depth, errno);
	d = malloc(sizeof(*d) + it->len + 1);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	atomic_init(&d->refs, 1);
	d->path_len = it->len;
	memcpy(d->path, it->data, it->len + 1);
	d->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);	/* fdopendir() takes fd */
	if (d->fd < 0) {
		r = report_error(wk, it->data, it->len, it->depth, errno);
		close(fd);
		dirref_put(d);
		return r;
	}
	dp = fdopendir(fd);
	if (!dp) {
		r = report_error(wk, it->data, it->len, it->depth, errno);
		close(fd);
		dirref_put(d);
		return r;
	}
	wk->names_len = wk->names_n = 0;
	for (;;) {
		struct dirent *de;

		errno = 0;
		de = readdir(dp);
		if (!de) {
			if (errno)
				r = report_error(wk, it->data, it->len, it->depth, errno);
			break;
		}
		if (de->d_name[0] == '.' &&
		    (de->d_name[1] == 0 || (de->d_name[1] == '.' && de->d_name[2] == 0)))
			continue;
		if (de->d_type == DT_DIR) {
			struct vg_walk_entry e = {
				.dirfd = d->fd,
				.name = de->d_name,
				.type = VG_WALK_DIR,
				.depth = it->depth + 1,
				.worker = wk->index,
			};

			r = make_path(wk, d->path, d->path_len, de->d_name, &e.path_len);
			if (r < 0)
				break;
			e.path = wk->path;
			r = visit_dir(wk, &e, it->dev, false, NULL);
			if (r < 0)
				break;
			continue;
		}
		r = names_add(wk, de->d_type, de->d_name);
		if (r < 0)
			break;
		if (wk->names_n == VG_WALK_BATCH) {
			r = flush_batch(wk, d, it);
			if (r < 0)
				break;
		}
	}
	if (r >= 0)
		r = flush_batch(wk, d, it);
	closedir(dp);
	dirref_put(d);
	return r;
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct walk *w = wk->w;

	for (;;) {
		struct item *it;
		int r;

		pthread_mutex_lock(&w->lock);
		while (!w->stack && w->busy && !w->error)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->stack || w->error) {
			pthread_cond_broadcast(&w->cond);
			pthread_mutex_unlock(&w->lock);
			break;
		}
		it = w->stack;
		w->stack = it->next;
		w->busy++;
		pthread_mutex_unlock(&w->lock);

		r = it->kind == ITEM_DIR ? run_dir(wk, it) : run_batch(wk, it);
		item_free(it);

		pthread_mutex_lock(&w->lock);
		w->busy--;
		if (r < 0 && !w->error)
			w->error = r;
		if (!w->busy || r < 0)
			pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
	}
	return NULL;
}

static struct item *roots_item(char *const *roots, size_t nroots)
{
	struct dirref *d;
	struct item *it;
	size_t len = 0;
	char *p;

	for (size_t i = 0; i < nroots; i++)
		len += strlen(roots[i]) + 2;
	it = malloc(sizeof(*it) + len);
	d = malloc(sizeof(*d) + 1);
	if (!it || !d) {
		free(it);
		free(d);
		return NULL;
	}
	atomic_init(&d->refs, 1);
	d->fd = AT_FDCWD;
	d->path_len = 0;
	d->path[0] = 0;
	memset(it, 0, sizeof(*it));
	it->kind = ITEM_BATCH;
	it->root_dev = true;
	it->dir = d;
	it->n = nroots;
	it->len = len;
	p = it->data;
	for (size_t i = 0; i < nroots; i++) {
		size_t l = strlen(roots[i]) + 1;

		*p++ = DT_UNKNOWN;
		memcpy(p, roots[i], l);
		p += l;
	}
	return it;
}

int vg_walk(const struct vg_walk_opts *o, char *const *roots, size_t nroots, vg_walk_fn fn,
	    void *arg, struct vg_diag *diag)
{
	unsigned int n = vg_walk_workers(o);
	struct worker wk[VG_WALK_MAX_WORKERS];
	pthread_t tid[VG_WALK_MAX_WORKERS];
	struct walk w = {
		.o = o,
		.fn = fn,
		.arg = arg,
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	unsigned int started = 0;
	struct item *it;
	int r = 0;

	if (!nroots)
		return 0;
	it = roots_item(roots, nroots);
	if (!it)
		return vg_diag_set(diag, -ENOMEM, "out of memory");
	w.stack = it;
	memset(wk, 0, sizeof(wk));
	for (unsigned int i = 0; i < n; i++) {
		wk[i].w = &w;
		wk[i].index = i;
	}
	/* worker 0 is this thread; the others are started here */
	for (unsigned int i = 1; i < n; i++) {
		r = pthread_create(&tid[i], NULL, worker_main, &wk[i]);
		if (r) {
			set_error(&w, -r);
			vg_diag_set(diag, -r, "cannot start walker thread: %s", strerror(r));
			break;
		}
		started = i;
	}
	worker_main(&wk[0]);
	for (unsigned int i = 1; i <= started; i++)
		pthread_join(tid[i], NULL);
	while (w.stack) {
		it = w.stack;
		w.stack = it->next;
		item_free(it);
	}
	for (unsigned int i = 0; i < n; i++) {
		free(wk[i].path);
		free(wk[i].names);
	}
	pthread_mutex_destroy(&w.lock);
	pthread_cond_destroy(&w.cond);
	if (w.error == -ENOMEM)
		vg_diag_set(diag, -ENOMEM, "out of memory");
	return w.error ? w.error : (r ? -r : 0);
}

/* inode set: open addressing, linear probing, one lock */
struct vg_inode_set {
	pthread_mutex_t lock;
	size_t n, cap;		/* cap: power of two */
	struct slot {
		dev_t dev;
		ino_t ino;
		bool used;
	} *slots;
};

int vg_inode_set_new(struct vg_inode_set **ret)
{
	struct vg_inode_set *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->cap = 1024;
	s->slots = calloc(s->cap, sizeof(*s->slots));
	if (!s->slots) {
		free(s);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->lock, NULL);
	*ret = s;
	return 0;
}

void vg_inode_set_free(struct vg_inode_set *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	free(s->slots);
	free(s);
}

static size_t slot_of(const struct vg_inode_set *s, dev_t dev, ino_t ino)
{
	uint64_t h = ((uint64_t)ino * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)dev * 0xc2b2ae3d27d4eb4full);

	return (size_t)(h >> 17) & (s->cap - 1);
}

static bool insert(struct vg_inode_set *s, dev_t dev, ino_t ino)
{
	size_t i = slot_of(s, dev, ino);

	while (s->slots[i].used) {
		if (s->slots[i].dev == dev && s->slots[i].ino == ino)
			return false;
		i = (i + 1) & (s->cap - 1);
	}
	s->slots[i] = (struct slot){ .dev = dev, .ino = ino, .used = true };
	s->n++;
	return true;
}

int vg_inode_set_add(struct vg_inode_set *s, dev_t dev, ino_t ino)
{
	int r = 1;

	pthread_mutex_lock(&s->lock);
	if ((s->n + 1) * 2 > s->cap) {
		struct slot *old = s->slots;
		size_t ocap = s->cap;

		s->slots = calloc(ocap * 2, sizeof(*s->slots));
		if (!s->slots) {
			s->slots = old;
			pthread_mutex_unlock(&s->lock);
			return -ENOMEM;
		}
		s->cap = ocap * 2;
		s->n = 0;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].used)
				insert(s, old[i].dev, old[i].ino);
		free(old);
	}
	if (!insert(s, dev, ino))
		r = 0;
	pthread_mutex_unlock(&s->lock);
	return r;
}
