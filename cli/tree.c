// SPDX-License-Identifier: MIT
/*
 * tree.c - running a command over many files (tree.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

#include <json-c/json.h>

#include "cli.h"
#include "tree.h"

/* Counters are atomic (a lock per file cost ~1%); the reason table is locked. */
static void add(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

static uint64_t get(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

void tree_count(struct tree *t, enum tree_kind kind, const char *reason)
{
	add(&t->stats.n[kind], 1);
	if (!reason)
		return;
	pthread_mutex_lock(&t->lock);
	{
		size_t i;

		for (i = 0; i < t->nreasons; i++)
			if (t->reasons[i].kind == kind && strcmp(t->reasons[i].reason, reason) == 0)
				break;
		if (i == t->nreasons && i < sizeof(t->reasons) / sizeof(t->reasons[0])) {
			t->reasons[i].kind = kind;
			t->reasons[i].reason = reason;
			t->reasons[i].n = 0;
			t->nreasons++;
		}
		if (i < t->nreasons)
			t->reasons[i].n++;
	}
	pthread_mutex_unlock(&t->lock);
}

void tree_add_bytes(struct tree *t, uint64_t n)
{
	add(&t->stats.bytes, n);
}

static void progress_clear(struct tree *t)
{
	if (t->progress_width) {
		fprintf(stderr, "\r%*s\r", t->progress_width, "");
		t->progress_width = 0;
	}
}

void tree_lock(struct tree *t)
{
	pthread_mutex_lock(&t->lock);
	progress_clear(t);
}

void tree_unlock(struct tree *t)
{
	pthread_mutex_unlock(&t->lock);
}

void tree_file_err(struct tree *t, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tree_lock(t);
	if (t->ops->error)
		t->ops->error(t, t->arg, path, msg);
	else
		cli_file_err(path, "%s", msg);
	tree_unlock(t);
}

void tree_print_reasons(const struct tree *t, FILE *f, enum tree_kind kind)
{
	for (size_t i = 0; i < t->nreasons; i++)
		if (t->reasons[i].kind == kind)
			fprintf(f, "  %s: %llu\n", t->reasons[i].reason,
				(unsigned long long)t->reasons[i].n);
}

struct json_object *tree_reasons_json(const struct tree *t, enum tree_kind kind)
{
	json_object *o = json_object_new_object();

	for (size_t i = 0; i < t->nreasons; i++)
		if (t->reasons[i].kind == kind)
			json_object_object_add(o, t->reasons[i].reason,
					       json_object_new_int64((int64_t)t->reasons[i].n));
	return o;
}

int tree_fs_uuid(struct tree_devcache *c, int fd, dev_t dev, uint8_t uuid[16],
		 struct vg_diag *diag)
{
	if (!c->valid || c->dev != dev) {
		c->valid = true;
		c->dev = dev;
		c->uuid_err = vg_fs_uuid(fd, c->uuid, diag);
		if (c->uuid_err < 0)
			return c->uuid_err;
	} else if (c->uuid_err < 0) {
		return vg_diag_set(diag, c->uuid_err,
				   "the filesystem UUID is unknown; give --uuid UUID or --no-uuid");
	}
	memcpy(uuid, c->uuid, 16);
	return 0;
}

static uint64_t fsmagic_of(struct tree *t, unsigned int w, int fd, dev_t dev)
{
	struct statfs sf;

	if (t->fscache[w].valid && t->fscache[w].dev == dev)
		return t->fscache[w].magic;
	t->fscache[w].valid = true;
	t->fscache[w].dev = dev;
	t->fscache[w].magic = fstatfs(fd, &sf) == 0 ? (uint64_t)sf.f_type : 0;
	return t->fscache[w].magic;
}

static bool nonblock_harmless(uint64_t magic)
{
	switch (magic) {
	case TMPFS_MAGIC:
	case EXT4_SUPER_MAGIC:	/* ext2, ext3 too */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case F2FS_SUPER_MAGIC:
	case RAMFS_MAGIC:
		return true;
	default:
		return false;
	}
}

static const char *open_reason(int err)
{
	switch (err) {
	case ENOENT:
		return "vanished";
	case EACCES:
	case EPERM:
		return "unreadable";
	case ELOOP:
		return "symlink";
	default:
		return "open-error";
	}
}

/* @follow: a symlink named on the command line is followed, as open(2) would */
static int on_file(struct tree *t, const struct vg_walk_entry *e, bool follow)
{
	struct tree_file f = { .path = e->path, .worker = e->worker };
	struct stat st;
	int fd, r;

	fd = openat(e->dirfd, e->name,
		    O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0) {
		int err = errno;

		if (err == ELOOP) {	/* replaced by a symlink since readdir */
			tree_count(t, TREE_SKIP, "symlink");
			return 0;
		}
		tree_file_err(t, e->path, "cannot open: %s", strerror(err));
		tree_count(t, TREE_ERROR, open_reason(err));
		return 0;
	}
	if (fstat(fd, &st) < 0) {
		tree_file_err(t, e->path, "cannot stat: %s", strerror(errno));
		tree_count(t, TREE_ERROR, "stat-error");
		close(fd);
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		if (e->depth == 0) {
			tree_file_err(t, e->path, "not a regular file");
			tree_count(t, TREE_ERROR, "not-regular");
			close(fd);
			return 0;
		}
		tree_count(t, TREE_SKIP, "special");
		close(fd);
		return 0;
	}
	if (st.st_nlink > 1 && !t->o.all_links) {
		r = vg_inode_set_add(t->links, st.st_dev, st.st_ino);
		if (r < 0) {
			close(fd);
			return r;
		}
		if (r == 0) {
			tree_count(t, TREE_SKIP, "hard-link");
			close(fd);
			return 0;
		}
	}
	f.fsmagic = fsmagic_of(t, e->worker, fd, st.st_dev);
	if (t->o.config && !vg_config_select(t->o.config, e->path, f.fsmagic, st.st_uid, st.st_gid,
					     st.st_mode, (uint64_t)st.st_size)) {
		tree_count(t, TREE_SKIP, "excluded");
		close(fd);
		return 0;
	}
	/*
	 * O_NONBLOCK only kept open() from blocking on a fifo swapped in
	 * after readdir; this is a regular file. Local filesystems ignore the
	 * flag on reads; others (FUSE, network) might not, so it goes there.
	 */
	if (!nonblock_harmless(f.fsmagic))
		(void)fcntl(fd, F_SETFL, 0);
	f.fd = fd;
	f.st = &st;
	f.hasher = t->hashers[e->worker];
	add(&t->stats.files, 1);
	r = t->ops->file(t, t->arg, &f);
	close(fd);
	return r;
}

static int on_entry(void *arg, const struct vg_walk_entry *e)
{
	struct tree *t = arg;

	switch (e->type) {
	case VG_WALK_REG:
		return on_file(t, e, false);
	case VG_WALK_ERROR:
		tree_file_err(t, e->path, "%s", strerror(e->error));
		tree_count(t, TREE_ERROR, e->error == ENOENT ? "vanished" :
			   e->error == EACCES ? "unreadable" : "read-error");
		return 0;
	case VG_WALK_DIR:
		if (e->depth == 0 && !t->o.recursive) {
			tree_file_err(t, e->path, "is a directory (use -r)");
			tree_count(t, TREE_ERROR, "directory");
			return VG_WALK_SKIP;
		}
		if (t->ops->other)
			return t->ops->other(t, t->arg, e);
		return 0;
	case VG_WALK_LNK:
	case VG_WALK_OTHER:
		if (e->depth == 0 && !t->ops->other)
			return on_file(t, e, true);
		if (t->ops->other)
			return t->ops->other(t, t->arg, e);
		tree_count(t, TREE_SKIP, e->type == VG_WALK_LNK ? "symlink" : "special");
		return 0;
	}
	return 0;
}

/* Count regular files under @path with readdir alone, for the ETA. */
static uint64_t precount(const char *path, int depth)
{
	uint64_t n = 0;
	struct dirent *de;
	DIR *d;
	int fd;

	if (depth > 64)
		return 0;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 1;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		if (de->d_type == DT_REG) {
			n++;
		} else if (de->d_type == DT_DIR && strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			size_t l = strlen(path) + strlen(de->d_name) + 2;
			char *sub = malloc(l);

			if (sub) {
				snprintf(sub, l, "%s/%s", path, de->d_name);
				n += precount(sub, depth + 1);
				free(sub);
			}
		}
	}
	closedir(d);
	return n;
}

struct progress {
	struct tree *t;
	char **paths;
	int npaths;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *progress_main(void *arg)
{
	struct progress *p = arg;
	struct tree *t = p->t;
	double start = now();
	uint64_t total = 0;

	if (t->o.recursive)
		for (int i = 0; i < p->npaths; i++)
			total += precount(p->paths[i], 0);
	pthread_mutex_lock(&p->lock);
	while (!p->done) {
		struct timespec ts;
		double el;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 500 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p->cond, &p->lock, &ts);
		if (p->done)
			break;
		el = now() - start;
		pthread_mutex_lock(&t->lock);
		{
			uint64_t files = get(&t->stats.files), bytes = get(&t->stats.bytes);
			double rate = el > 0 ? (double)files / el : 0;
			char of[32] = "", eta[32] = "";
			int w;

			if (total)
				snprintf(of, sizeof(of), "/%llu", (unsigned long long)total);
			if (total > files && rate > 0)
				snprintf(eta, sizeof(eta), ", ETA %.0f s", (double)(total - files) / rate);
			w = fprintf(stderr, "\r%llu%s files, %.2f GB, %.0f files/s, %.2f GB/s%s ",
				    (unsigned long long)files, of, (double)bytes / 1e9, rate,
				    el > 0 ? (double)bytes / 1e9 / el : 0, eta);
			t->progress_width = w > 1 ? w - 1 : 0;
		}
		pthread_mutex_unlock(&t->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int tree_run(const struct tree_opts *o, const struct tree_ops *ops, void *arg, char **paths,
	     int npaths, struct tree_stats *ret_stats, struct tree *t)
{
	struct vg_walk_opts wo = {
		.workers = o->workers,
		.recursive = o->recursive,
		.cross_mounts = o->cross_mounts,
	};
	struct progress p = {
		.t = t,
		.paths = paths,
		.npaths = npaths,
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	pthread_t ptid;
	struct vg_diag d = { 0 };
	double t0;
	int r;

	memset(t, 0, sizeof(*t));
	t->o = *o;
	t->ops = ops;
	t->arg = arg;
	pthread_mutex_init(&t->lock, NULL);
	if (vg_inode_set_new(&t->links) < 0) {
		cli_err("out of memory");
		return -1;
	}
	for (unsigned int i = 0; i < vg_walk_workers(&wo); i++)
		if (vg_hasher_new(&t->hashers[i]) < 0) {
			cli_err("out of memory");
			return -1;
		}
	t->progress_on = !o->quiet && isatty(STDERR_FILENO);
	if (t->progress_on && pthread_create(&ptid, NULL, progress_main, &p) != 0)
		t->progress_on = false;
	t0 = now();
	r = vg_walk(&wo, paths, (size_t)npaths, on_entry, t, &d);
	t->seconds = now() - t0;
	if (t->progress_on) {
		pthread_mutex_lock(&p.lock);
		p.done = true;
		pthread_cond_signal(&p.cond);
		pthread_mutex_unlock(&p.lock);
		pthread_join(ptid, NULL);
		progress_clear(t);
	}
	*ret_stats = t->stats;
	if (r < 0) {
		if (d.msg[0])
			cli_err("%s", d.msg);
		else if (r != -ECANCELED)
			cli_err("walk stopped: %s", strerror(-r));
		return -1;
	}
	return 0;
}

void tree_release(struct tree *t)
{
	for (unsigned int i = 0; i < VG_WALK_MAX_WORKERS; i++)
		vg_hasher_free(t->hashers[i]);
	vg_inode_set_free(t->links);
	t->links = NULL;
	pthread_mutex_destroy(&t->lock);
}

int cli_load_config(const char *path, struct vg_config *cfg)
{
	struct vg_diag d = { 0 };
	const char *env = getenv("VIGIL_CONFIG");

	if (!path && env && *env)
		path = env;
	if (vg_config_load(cfg, path ? path : VG_CONFIG_DEFAULT, !path, &d) < 0) {
		cli_err("config: %s", d.msg);
		return -1;
	}
	return 0;
}

int cli_parse_jobs(const char *arg, unsigned int *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || *end || arg[0] == '-' || v < 1 || v > VG_WALK_MAX_WORKERS) {
		cli_err("--jobs '%s': give a number of threads from 1 to %d", arg, VG_WALK_MAX_WORKERS);
		return -1;
	}
	*ret = (unsigned int)v;
	return 0;
}
