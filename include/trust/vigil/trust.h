/* SPDX-License-Identifier: MIT */
/*
 * trust.h - a trust database from the Debian archive (issue 16): the chain
 * InRelease (OpenPGP, checked by gpgv against an archive keyring) ->
 * Packages (SHA-256 and size listed by the verified InRelease) -> .deb
 * (SHA-256 and size listed by the verified Packages stanza) -> every file
 * of its data.tar.*, recorded with its digests, package, version,
 * architecture, origin and conffile flag in an SQLite database under an
 * HMAC-SHA256 (key derived from the EVM HMAC key with the label
 * "vigil trust database v1").
 *
 * Nothing here reads an unverified byte as a fact: release fields and
 * digests come only from gpgv's --output (the signed text), Packages
 * stanzas only from a list whose uncompressed digest InRelease names,
 * file digests only from a .deb whose digest that stanza names. OpenPGP
 * is gpgv's business, archives libarchive's: no parser of either here.
 *
 * No global state, no logging, no exit: negative errno and a vg_diag.
 */
#ifndef VIGIL_TRUST_H
#define VIGIL_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/diag.h"
#include "vigil/hash.h"

/* Debian's archive keyring and the gpgv that checks InRelease against it */
#define VG_TRUST_KEYRING "/usr/share/keyrings/debian-archive-keyring.gpg"
#define VG_TRUST_GPGV "/usr/bin/gpgv"
/* how many digest algorithms a database records per file */
#define VG_TRUST_MAX_ALGOS 4

/* one "SHA256:" line of a Release file: " HEX SIZE PATH" */
struct vg_trust_relfile {
	char *path;
	uint64_t size;
	uint8_t sha256[32];
};

/* what a verified InRelease says */
struct vg_trust_release {
	char *origin, *label, *suite, *codename;
	int64_t date;		/* seconds since the epoch; 0 if absent */
	int64_t valid_until;	/* 0 if absent */
	uint8_t sha256[32];	/* of the InRelease file as read (signature included) */
	struct vg_trust_relfile *files;
	size_t nfiles;
};

/*
 * vg_trust_release_parse - parse the signed text of a Release file (what
 * gpgv --output writes: the cleartext, dash-unescaped, without the
 * signature). Only the fields above are kept; the SHA256 section is
 * required. Return: 0; -EBADMSG (malformed: diag names the line); -ENOMEM.
 */
int vg_trust_release_parse(const char *text, size_t len, struct vg_trust_release *ret,
			   struct vg_diag *diag);

/* flags of vg_trust_release_verify() */
#define VG_TRUST_ALLOW_EXPIRED 0x1u	/* accept a Valid-Until in the past */

/*
 * vg_trust_release_verify - run @gpgv (NULL: VG_TRUST_GPGV) with
 * --keyring @keyring (NULL: VG_TRUST_KEYRING) on the InRelease file
 * @path, fork and exec, no shell, and parse only what gpgv wrote to its
 * --output. @now is the time Valid-Until is compared with.
 * Return: 0; -EKEYREJECTED (gpgv did not verify: diag has its reason,
 * from its last lines); -EKEYEXPIRED (Valid-Until passed, without VG_TRUST_ALLOW_EXPIRED);
 * -EBADMSG; -ENOENT and other -errno of reading @path or running gpgv.
 */
int vg_trust_release_verify(const char *path, const char *keyring, const char *gpgv,
			    int64_t now, unsigned int flags, struct vg_trust_release *ret,
			    struct vg_diag *diag);

/* the most keyrings vg_trust_release_verify_keyrings() hands gpgv */
#define VG_TRUST_MAX_KEYRINGS 64

/*
 * vg_trust_release_verify_keyrings - vg_trust_release_verify() with the
 * @nkr (1 to VG_TRUST_MAX_KEYRINGS) keyrings @keyrings, each a --keyring
 * of one gpgv run: a signature by a key of any of them verifies (a local
 * repository signed by its own key beside the archive's).
 * Return: as vg_trust_release_verify(); -EINVAL for @nkr out of range.
 */
int vg_trust_release_verify_keyrings(const char *path, const char *const *keyrings, size_t nkr,
				     const char *gpgv, int64_t now, unsigned int flags,
				     struct vg_trust_release *ret, struct vg_diag *diag);

/* the keys an InRelease must be signed with (apt's Signed-By) */
struct vg_trust_keys {
	const char *const *keyrings;	/* OpenPGP keyring files, binary or ASCII-armored */
	size_t nkr;			/* 1 to VG_TRUST_MAX_KEYRINGS */
	const char *const *fprs;	/* accepted signers (hex; "FPR!": not its subkeys) */
	size_t nfpr;			/* 0: a key of any of the keyrings */
};

/*
 * vg_trust_release_verify_keys - vg_trust_release_verify() with @k: one
 * gpgv run with every keyring; verified when a signature is valid, by a
 * key of @k->fprs if any (the key itself or, without "!", its primary
 * key), and no signature is bad (apt's rule: a signature by a key the
 * keyrings lack does not fail the others). A keyring in ASCII armor (.asc)
 * is decoded for gpgv, which reads only binary ones.
 * Return: as vg_trust_release_verify(); -EKEYREJECTED's diag quotes
 * gpgv's reason ("Can't check signature: No public key", "BAD signature
 * from ...") with the key; -EINVAL for @k->nkr out of range.
 */
int vg_trust_release_verify_keys(const char *path, const struct vg_trust_keys *k,
				 const char *gpgv, int64_t now, unsigned int flags,
				 struct vg_trust_release *ret, struct vg_diag *diag);

/*
 * vg_trust_dearmor - the packets of every ASCII-armored block of @in
 * (RFC 4880 6.2: the "-----BEGIN PGP" line, header lines up to a blank
 * line, radix-64, the CRC line "=XXXX", the tail line), concatenated, as
 * gpgv needs a keyring; text around the blocks is ignored. The CRC is not
 * checked and no packet is parsed: gpgv reads them. Return: 0 and *@ret
 * (malloc'ed, *@ret_len bytes, at least one); -EBADMSG (no block, one not
 * closed, or radix-64 that is not); -ENOMEM.
 */
int vg_trust_dearmor(const uint8_t *in, size_t len, uint8_t **ret, size_t *ret_len);

/* The entry of @rel whose SHA-256 and size are these, or NULL. */
const struct vg_trust_relfile *vg_trust_release_find(const struct vg_trust_release *rel,
						     const uint8_t sha256[32], uint64_t size);

void vg_trust_release_release(struct vg_trust_release *rel);

/* one stanza of a Packages list, the fields the chain needs */
struct vg_trust_pkg {
	char *package, *version, *arch, *filename;
	uint64_t size;
	uint8_t sha256[32];
	uint32_t release;	/* the caller's index of the release that listed it */
};

struct vg_trust_packages {
	struct vg_trust_pkg *pkgs;
	size_t n, cap;
	bool sorted;
};

/*
 * vg_trust_packages_parse - add the stanzas of the Packages text @text to
 * @pk (initialised with zeros), each tagged with @release. A stanza
 * without Package, Version, Architecture, Filename, Size or SHA256 is
 * malformed. Return: 0; -EBADMSG (diag names the stanza); -ENOMEM.
 */
int vg_trust_packages_parse(struct vg_trust_packages *pk, const char *text, size_t len,
			    uint32_t release, struct vg_diag *diag);

/*
 * vg_trust_packages_load - decompress the index @path (plain, .gz, .xz,
 * .lz4, .bz2, .zst: whatever libarchive's filters read), take SHA-256 and
 * size of the uncompressed bytes, find them among @rel's entries for a
 * ".../Packages" path, and only then parse the stanzas into @pk.
 * @ret_entry (may be NULL) gets the matching entry.
 * Return: 0; -EKEYREJECTED (@rel lists no Packages with that digest and
 * size); -EBADMSG; -ENOMEM; -errno of reading.
 */
int vg_trust_packages_load(struct vg_trust_packages *pk, const char *path,
			   const struct vg_trust_release *rel, uint32_t release,
			   const struct vg_trust_relfile **ret_entry, struct vg_diag *diag);

/*
 * vg_trust_packages_find - the stanzas for @package @version @arch
 * (@arch NULL: any): *ret_first and the count, consecutive, in the order
 * of their release numbers. Sorts @pk on first use.
 * Return: the count (0: none).
 */
size_t vg_trust_packages_find(struct vg_trust_packages *pk, const char *package,
			      const char *version, const char *arch,
			      const struct vg_trust_pkg **ret_first);

/*
 * vg_trust_packages_newest - the highest version (dpkg's order) of
 * @package for @arch (NULL: any) that @pk lists. Sorts @pk on first use.
 * Return: it (valid while @pk is), or NULL when @pk lists none.
 */
const char *vg_trust_packages_newest(struct vg_trust_packages *pk, const char *package,
				     const char *arch);

void vg_trust_packages_release(struct vg_trust_packages *pk);

/*
 * What a file row is (the files table's `conffile` column, format 2):
 * a file of data.tar, a conffile, a maintainer script where dpkg keeps it
 * (/var/lib/dpkg/info/PKG[:ARCH].SCRIPT), or one where dpkg runs the new
 * version's script from before it is installed (/var/lib/dpkg/tmp.ci/
 * SCRIPT: there only during an unpack, never reported missing).
 */
enum vg_trust_kind {
	VG_TRUST_KIND_FILE = 0,
	VG_TRUST_KIND_CONFFILE = 1,
	VG_TRUST_KIND_SCRIPT = 2,
	VG_TRUST_KIND_SCRIPT_TMP = 3,
};
#define VG_TRUST_KIND_MAX VG_TRUST_KIND_SCRIPT_TMP

/* where dpkg keeps and runs maintainer scripts */
#define VG_TRUST_DPKG_INFO "/var/lib/dpkg/info/"
#define VG_TRUST_DPKG_TMPCI "/var/lib/dpkg/tmp.ci/"

/* one file (or symbolic link) of a package's data.tar, or a maintainer script */
struct vg_trust_file {
	char *path;		/* absolute, normalised: "/usr/bin/x" */
	char *target;		/* symbolic links: the target; else NULL */
	uint32_t mode;		/* st_mode as the archive says */
	uint64_t size;
	bool conffile;		/* kind == VG_TRUST_KIND_CONFFILE */
	enum vg_trust_kind kind;
	struct vg_digest dg[VG_TRUST_MAX_ALGOS];	/* regular files: one per algorithm */
	/* the owner the archive gives (dpkg takes the names, else the ids) */
	bool have_owner;
	uint32_t uid, gid;
	char *uname, *gname;	/* NULL: none in the archive */
	/*
	 * a boot image (trust_boot.h: vg_trust_boot_role() of its path, a PE
	 * image): its Authenticode SHA-256 (PCR 4) and its plain SHA-256
	 * (GRUB's PCR 9), whatever algorithms the database records
	 */
	bool boot;
	uint8_t boot_authenticode[32], boot_sha256[32];
};

struct vg_trust_deb {
	struct vg_trust_file *files;
	size_t n, cap;
	uint8_t sha256[32];	/* of the .deb, equal to the stanza's */
	uint64_t size;
};

/*
 * vg_trust_deb_read - check the .deb open on @fd against @want (its whole
 * SHA-256 and size) and only then read it with libarchive (ar): the
 * conffiles of control.tar.*, then every regular file and symbolic link
 * of data.tar.*, each regular file digested with the @nalgos algorithms
 * @algos (VG_TRUST_MAX_ALGOS at most). Hard links get their target's
 * digests. The maintainer scripts of control.tar.* (preinst, postinst,
 * prerm, postrm, config) are added as files of kind VG_TRUST_KIND_SCRIPT
 * under VG_TRUST_DPKG_INFO "NAME.SCRIPT" (NAME @want's package, with
 * ":ARCH" when control says "Multi-Arch: same", as dpkg names them), and
 * preinst, prerm, postrm also as VG_TRUST_KIND_SCRIPT_TMP under
 * VG_TRUST_DPKG_TMPCI "SCRIPT", where dpkg runs the new version's from
 * (src/main/unpack.c: maintscript_new, maintscript_fallback). A package
 * name or architecture that is not a single path component is -EBADMSG. Return: 0; -EKEYREJECTED (digest or size differs: nothing
 * read); -EBADMSG (not a .deb, or a damaged member); -EOPNOTSUPP; -ENOMEM;
 * -errno of reading.
 */
int vg_trust_deb_read(int fd, const struct vg_trust_pkg *want, const unsigned int *algos,
		      size_t nalgos, struct vg_trust_deb *ret, struct vg_diag *diag);

void vg_trust_deb_release(struct vg_trust_deb *deb);

/* ---- the database (trust_db.c, docs/trust.md) ---- */

struct vg_trust_db;

enum vg_trust_state { VG_TRUST_CURRENT = 0, VG_TRUST_SUPERSEDED = 1 };

/* a package row */
struct vg_trust_pkgrow {
	int64_t id;
	const char *name, *version, *arch, *origin, *suite;
	uint8_t deb_sha256[32];
	enum vg_trust_state state;
	int64_t superseded_at;	/* 0 while current */
};

/* a file row, as vg_trust_db_files() yields it */
struct vg_trust_filerow {
	const char *path;
	const char *target;	/* NULL unless a symbolic link */
	uint32_t mode;
	uint64_t size;
	bool conffile;		/* kind == VG_TRUST_KIND_CONFFILE */
	enum vg_trust_kind kind;
	const struct vg_trust_pkgrow *pkg;
	size_t ndg;
	struct vg_digest dg[VG_TRUST_MAX_ALGOS];
	/* the archive's owner: recorded from format 3 on (have_owner) */
	bool have_owner;
	uint32_t uid, gid;
	const char *uname, *gname;	/* NULL: none */
};

/*
 * vg_trust_db_create - start a new database written to a temporary beside
 * @path (vg_outfile) and renamed over it by vg_trust_db_commit(). @algos:
 * the digest algorithms recorded per file. Return: 0, -errno (diag).
 */
int vg_trust_db_create(const char *path, const unsigned int *algos, size_t nalgos,
		       const uint8_t *key, size_t keylen, struct vg_trust_db **ret,
		       struct vg_diag *diag);

/* Record a release. Return: its id (> 0), or -errno. */
int64_t vg_trust_db_add_release(struct vg_trust_db *db, const struct vg_trust_release *rel,
				struct vg_diag *diag);

/*
 * vg_trust_db_add_package - record a package (@p->id ignored, @p->origin
 * and @p->suite those of @release_id) and its files. Return: 0, -errno.
 */
int vg_trust_db_add_package(struct vg_trust_db *db, int64_t release_id,
			    const struct vg_trust_pkgrow *p, const struct vg_trust_deb *deb,
			    struct vg_diag *diag);

/*
 * vg_trust_db_carry - copy from the opened @old every package that @db
 * does not record with the same name, architecture and version, with its
 * files: as superseded (since @now, or since when @old says) when @db
 * records the name and architecture in another version and @now is
 * within @grace seconds of that time, dropped when older; as it was
 * otherwise (a package not rebuilt this time). The sources' Dates @db
 * does not record are copied too. A file of a format 1 or 2 @old has no
 * owner. Call after adding every package, before commit. Return: the
 * number of packages dropped, or -errno.
 */
int vg_trust_db_carry(struct vg_trust_db *db, struct vg_trust_db *old, int64_t now,
		      int64_t grace, struct vg_diag *diag);

/* MAC, rename into place. @db is freed either way. Return: 0, -errno. */
int vg_trust_db_commit(struct vg_trust_db *db, struct vg_diag *diag);

/*
 * vg_trust_db_open - open @path read-only and check its schema and MAC
 * with @key before anything is read from it. Return: 0; -EKEYREJECTED
 * (altered, or another key); -EBADMSG (not a trust database); -errno.
 */
int vg_trust_db_open(const char *path, const uint8_t *key, size_t keylen,
		     struct vg_trust_db **ret, struct vg_diag *diag);

/* The algorithms an opened database records. Return: their count. */
size_t vg_trust_db_algos(const struct vg_trust_db *db, unsigned int *algos);
/* Return: @want if an opened database records it, else the first it records. */
unsigned int vg_trust_db_algo_pick(const struct vg_trust_db *db, unsigned int want);

/*
 * vg_trust_db_files - call @fn for every file row of an opened database
 * (with @current_only, of current packages only), in path order; a
 * non-zero return of @fn stops and is returned. Return: 0, that, -errno.
 */
int vg_trust_db_files(struct vg_trust_db *db, bool current_only,
		      int (*fn)(void *arg, const struct vg_trust_filerow *f), void *arg,
		      struct vg_diag *diag);

/*
 * An opened database is used by one thread at a time (SQLite without its
 * own mutex): callers sharing one across threads lock around each call.
 * vg_trust_db_lookup - whether @path with digest @dg is trusted: recorded
 * for a current package, or a superseded one. Return: 1 current, 2 only
 * superseded (within its grace when recorded), 0 not trusted, -errno.
 */
int vg_trust_db_lookup(struct vg_trust_db *db, const char *path, const struct vg_digest *dg,
		       struct vg_diag *diag);

/*
 * vg_trust_db_recorded - what an opened database records for @path in
 * algorithm @algo, to say why a digest was not trusted: *@ret_dg (may be
 * NULL) gets a digest a current package records for it, else one of a
 * superseded package. Return: 1 a current package records it, 2 only
 * superseded ones, 0 none (not in the database, or not in @algo), -errno.
 */
int vg_trust_db_recorded(struct vg_trust_db *db, const char *path, unsigned int algo,
			 struct vg_digest *ret_dg, struct vg_diag *diag);

/* Return: the format of an opened database (1 to 3; 3 is written). */
unsigned int vg_trust_db_format(const struct vg_trust_db *db);

/*
 * vg_trust_db_set_source - record, in a database being written, the Date
 * of @rel as the source @name's (where its InRelease is: apt's list
 * name): the newest a later build compares an InRelease of that source
 * with. Return: 0, -errno.
 */
int vg_trust_db_set_source(struct vg_trust_db *db, const char *name,
			   const struct vg_trust_release *rel, struct vg_diag *diag);

/*
 * vg_trust_db_source_date - the Date an opened database records for the
 * source @name (format 3: its sources table; 1 and 2, which name no
 * source: the newest of its releases with @rel's Origin, Label, Suite and
 * Codename). Return: 1 and *@ret_date; 0 none recorded; -errno.
 */
int vg_trust_db_source_date(struct vg_trust_db *db, const char *name,
			    const struct vg_trust_release *rel, int64_t *ret_date,
			    struct vg_diag *diag);

/* Packages recorded: *ret_current, *ret_superseded; files (rows). */
void vg_trust_db_counts(struct vg_trust_db *db, uint64_t *ret_current,
			uint64_t *ret_superseded, uint64_t *ret_files);

void vg_trust_db_free(struct vg_trust_db *db);

/* ---- a database in memory (trust_index.c) ---- */

/*
 * A database's (path, digest) pairs in one algorithm with the package
 * (name, version, architecture, state) that ships each: for a daemon's
 * event path (vigild's trust=archive) and for a verifier naming the
 * package of a digest its policy does not allow.
 */
struct vg_trust_index;

struct vg_trust_hit {
	const char *package, *version, *arch;	/* valid while the index is */
	enum vg_trust_state state;
};

/*
 * vg_trust_index_load - every regular file the opened (authenticated)
 * @db records, of current and superseded packages, with its @algo digest,
 * into an immutable in-memory table (no SQLite after this; any number of
 * threads may look up). Return: 0 and *@ret; -EOPNOTSUPP (@db records no
 * @algo digests); -ENOMEM; -errno of reading @db.
 */
int vg_trust_index_load(struct vg_trust_db *db, unsigned int algo, struct vg_trust_index **ret,
			struct vg_diag *diag);

/*
 * vg_trust_index_lookup - whether @path with content digest @dg is
 * recorded (as vg_trust_db_lookup). @dg in another algorithm than the
 * index's is never trusted. *@ret_package (may be NULL), on a hit: the
 * package's name, valid as long as @idx. Return: 1 a current package
 * records it, 2 only a superseded one, 0 not trusted.
 */
int vg_trust_index_lookup(const struct vg_trust_index *idx, const char *path,
			  const struct vg_digest *dg, const char **ret_package);

/*
 * vg_trust_index_find - every package that records @path with digest @dg
 * (in the index's algorithm): up to @max of them in @ret, the newest
 * version first (dpkg's order). Return: how many record it (0: none, or
 * @dg in another algorithm), which may exceed @max.
 */
size_t vg_trust_index_find(const struct vg_trust_index *idx, const char *path,
			   const struct vg_digest *dg, struct vg_trust_hit *ret, size_t max);

/* Return: the files (path, package) in @idx; 0 for NULL. */
size_t vg_trust_index_count(const struct vg_trust_index *idx);
/* Return: the algorithm of @idx's digests. */
unsigned int vg_trust_index_algo(const struct vg_trust_index *idx);
void vg_trust_index_free(struct vg_trust_index *idx);

/* ---- the database's path of a file (trust_root.c) ---- */

/* a root the database's paths are relative to, and its merged-/usr links */
struct vg_trust_root {
	char *root;		/* canonical (realpath); "/" by default */
	size_t rootlen;		/* 0 for "/" */
	unsigned int merged;	/* ROOT/bin, sbin, lib, lib32, lib64, libx32 link to usr/...: a bit each */
};

/*
 * vg_trust_root_init - canonicalise @root (NULL: "/") and note which of
 * its bin, sbin, lib, lib32, lib64, libx32 are links to usr/NAME (merged
 * /usr). Return: 0; -errno of realpath (diag names @root).
 */
int vg_trust_root_init(struct vg_trust_root *tr, const char *root, struct vg_diag *diag);

/*
 * vg_trust_root_path - the path the database records for a file whose
 * kernel name (readlink of /proc/self/fd/N) is @name: @name with the root
 * cut off, pointing into @name. Return: that, or NULL when @name is not
 * absolute, not under the root, or unlinked ("... (deleted)").
 */
const char *vg_trust_root_path(const struct vg_trust_root *tr, const char *name);

/*
 * vg_trust_root_alias - on a merged-/usr root, the name a package ships
 * /usr/bin/x under: /bin/x (pointing into @path), for bin, sbin, lib,
 * lib32, lib64, libx32 when that directory of the root is a link to
 * usr/NAME. Return: that, or NULL (no alias).
 */
const char *vg_trust_root_alias(const struct vg_trust_root *tr, const char *path);

void vg_trust_root_release(struct vg_trust_root *tr);

/*
 * vg_trust_version_cmp - order two Debian versions as dpkg does
 * (deb-version(7)): epoch, upstream version, revision; '~' sorts before
 * anything, the end included. Return: < 0, 0, > 0 as @a is lower, equal,
 * higher than @b.
 */
int vg_trust_version_cmp(const char *a, const char *b);

#endif
