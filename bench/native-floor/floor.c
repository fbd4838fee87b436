/*
 * The floor of FUSE without Node: a tree copied into memory at start and served through libfuse
 * 2's high-level API, the API fuse-native binds, doing nothing else. Set against the fuse-native
 * floor (bench/mount-floor.ts) on the same kernel options, it shows what the binding and the
 * JavaScript event loop add to each request, and so what a lower-level binding could save.
 *
 * Build: bash bench/native-floor/build.sh (gcc, libfuse-dev). Run: floor SOURCE_DIR MOUNTPOINT [fuse options].
 */
#define FUSE_USE_VERSION 26
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct node {
  char *name;
  mode_t mode;
  ino_t ino;
  char *data;
  size_t size, cap;
  struct timespec mtime;
  struct node **kids;
  size_t nkids, capkids;
};

static struct node *root;
static ino_t next_ino = 1;

static struct node *make(const char *name, mode_t mode) {
  struct node *n = calloc(1, sizeof *n);
  n->name = strdup(name);
  n->mode = mode;
  n->ino = next_ino++;
  clock_gettime(CLOCK_REALTIME, &n->mtime);
  return n;
}

static struct node *child(struct node *dir, const char *name, size_t len, size_t *at) {
  for (size_t i = 0; i < dir->nkids; i++) {
    if (strlen(dir->kids[i]->name) == len && memcmp(dir->kids[i]->name, name, len) == 0) {
      if (at) *at = i;
      return dir->kids[i];
    }
  }
  return NULL;
}

static void add(struct node *dir, struct node *n) {
  if (dir->nkids == dir->capkids) {
    dir->capkids = dir->capkids ? 2 * dir->capkids : 8;
    dir->kids = realloc(dir->kids, dir->capkids * sizeof *dir->kids);
  }
  dir->kids[dir->nkids++] = n;
}

static void drop(struct node *dir, size_t at) { dir->kids[at] = dir->kids[--dir->nkids]; }

/* The node at `path`; with `parent`, the directory holding the last name and that name. */
static struct node *find(const char *path, struct node **parent, const char **last) {
  struct node *n = root, *up = NULL;
  const char *p = path, *name = "";
  while (*p == '/') p++;
  while (*p) {
    const char *end = strchr(p, '/');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    up = n;
    name = p;
    n = (n && S_ISDIR(n->mode)) ? child(n, p, len, NULL) : NULL;
    p += len;
    while (*p == '/') p++;
    if (!n && *p) return NULL;
  }
  if (parent) *parent = up;
  if (last) *last = name;
  return n;
}

static void fill(struct node *n, struct stat *st) {
  memset(st, 0, sizeof *st);
  st->st_mode = n->mode;
  st->st_ino = n->ino;
  st->st_nlink = S_ISDIR(n->mode) ? 2 : 1;
  st->st_size = (off_t)n->size;
  st->st_uid = getuid();
  st->st_gid = getgid();
  st->st_mtim = st->st_atim = st->st_ctim = n->mtime;
}

static void resize(struct node *n, size_t size) {
  if (size > n->cap) {
    n->cap = size > 2 * n->cap ? size : 2 * n->cap;
    n->data = realloc(n->data, n->cap);
  }
  if (size > n->size) memset(n->data + n->size, 0, size - n->size);
  n->size = size;
  clock_gettime(CLOCK_REALTIME, &n->mtime);
}

static int op_getattr(const char *path, struct stat *st) {
  struct node *n = find(path, NULL, NULL);
  if (!n) return -ENOENT;
  fill(n, st);
  return 0;
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t put, off_t off, struct fuse_file_info *fi) {
  (void)off, (void)fi;
  struct node *n = find(path, NULL, NULL);
  if (!n || !S_ISDIR(n->mode)) return -ENOENT;
  struct stat st;
  fill(n, &st);
  put(buf, ".", &st, 0);
  put(buf, "..", &st, 0);
  for (size_t i = 0; i < n->nkids; i++) {
    fill(n->kids[i], &st);
    put(buf, n->kids[i]->name, &st, 0);
  }
  return 0;
}

static int op_open(const char *path, struct fuse_file_info *fi) {
  struct node *n = find(path, NULL, NULL);
  if (!n) return -ENOENT;
  if (fi->flags & O_TRUNC) resize(n, 0);
  fi->fh = (uint64_t)(uintptr_t)n;
  return 0;
}

static int op_create(const char *path, mode_t mode, struct fuse_file_info *fi) {
  struct node *dir;
  const char *name;
  struct node *n = find(path, &dir, &name);
  if (!dir || !S_ISDIR(dir->mode)) return -ENOENT;
  if (!n) add(dir, n = make(name, S_IFREG | (mode & 07777)));
  fi->fh = (uint64_t)(uintptr_t)n;
  return 0;
}

static int op_read(const char *path, char *buf, size_t len, off_t pos, struct fuse_file_info *fi) {
  (void)path;
  struct node *n = (struct node *)(uintptr_t)fi->fh;
  if ((size_t)pos >= n->size) return 0;
  if (len > n->size - (size_t)pos) len = n->size - (size_t)pos;
  memcpy(buf, n->data + pos, len);
  return (int)len;
}

static int op_write(const char *path, const char *buf, size_t len, off_t pos, struct fuse_file_info *fi) {
  (void)path;
  struct node *n = (struct node *)(uintptr_t)fi->fh;
  if ((size_t)pos + len > n->size) resize(n, (size_t)pos + len);
  memcpy(n->data + pos, buf, len);
  clock_gettime(CLOCK_REALTIME, &n->mtime);
  return (int)len;
}

static int op_truncate(const char *path, off_t size) {
  struct node *n = find(path, NULL, NULL);
  if (!n) return -ENOENT;
  resize(n, (size_t)size);
  return 0;
}

static int op_ftruncate(const char *path, off_t size, struct fuse_file_info *fi) {
  (void)path;
  resize((struct node *)(uintptr_t)fi->fh, (size_t)size);
  return 0;
}

static int op_none(const char *path, struct fuse_file_info *fi) { (void)path, (void)fi; return 0; }
static int op_fsync(const char *path, int d, struct fuse_file_info *fi) { (void)path, (void)d, (void)fi; return 0; }
static int op_utimens(const char *path, const struct timespec tv[2]) { (void)path, (void)tv; return 0; }
static int op_chown(const char *path, uid_t u, gid_t g) { (void)path, (void)u, (void)g; return 0; }

static int op_chmod(const char *path, mode_t mode) {
  struct node *n = find(path, NULL, NULL);
  if (!n) return -ENOENT;
  n->mode = (n->mode & ~07777) | (mode & 07777);
  return 0;
}

static int op_mkdir(const char *path, mode_t mode) {
  struct node *dir;
  const char *name;
  if (find(path, &dir, &name)) return -EEXIST;
  if (!dir || !S_ISDIR(dir->mode)) return -ENOENT;
  add(dir, make(name, S_IFDIR | (mode & 07777)));
  return 0;
}

static int op_unlink(const char *path) {
  struct node *dir;
  const char *name;
  size_t at;
  if (!find(path, &dir, &name) || !child(dir, name, strlen(name), &at)) return -ENOENT;
  drop(dir, at);
  return 0;
}

static int op_rmdir(const char *path) {
  struct node *dir;
  const char *name;
  size_t at;
  struct node *n = find(path, &dir, &name);
  if (!n || !S_ISDIR(n->mode)) return -ENOENT;
  if (n->nkids > 0) return -ENOTEMPTY;
  child(dir, name, strlen(name), &at);
  drop(dir, at);
  return 0;
}

static int op_rename(const char *from, const char *to) {
  struct node *a, *b;
  const char *an, *bn;
  size_t at;
  struct node *n = find(from, &a, &an);
  if (!n) return -ENOENT;
  struct node *old = find(to, &b, &bn);
  if (!b || !S_ISDIR(b->mode)) return -ENOENT;
  child(a, an, strlen(an), &at);
  drop(a, at);
  if (old && child(b, bn, strlen(bn), &at)) drop(b, at);
  free(n->name);
  n->name = strdup(bn);
  add(b, n);
  return 0;
}

/* Copies the directory `path` into `dir`. */
static void load(const char *path, struct node *dir) {
  DIR *d = opendir(path);
  if (!d) { perror(path); exit(1); }
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char full[4096];
    snprintf(full, sizeof full, "%s/%s", path, e->d_name);
    struct stat st;
    if (lstat(full, &st)) continue;
    if (S_ISDIR(st.st_mode)) {
      struct node *n = make(e->d_name, S_IFDIR | 0755);
      add(dir, n);
      load(full, n);
    } else if (S_ISREG(st.st_mode)) {
      struct node *n = make(e->d_name, S_IFREG | (st.st_mode & 07777));
      FILE *f = fopen(full, "rb");
      resize(n, (size_t)st.st_size);
      if (f && fread(n->data, 1, n->size, f) != n->size) n->size = 0;
      if (f) fclose(f);
      add(dir, n);
    }
  }
  closedir(d);
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s SOURCE_DIR MOUNTPOINT [fuse options]\n", argv[0]); return 2; }
  root = make("", S_IFDIR | 0755);
  load(argv[1], root);
  static struct fuse_operations ops = {
    .getattr = op_getattr, .readdir = op_readdir, .open = op_open, .create = op_create,
    .read = op_read, .write = op_write, .truncate = op_truncate, .ftruncate = op_ftruncate,
    .release = op_none, .flush = op_none, .fsync = op_fsync, .utimens = op_utimens,
    .chmod = op_chmod, .chown = op_chown, .mkdir = op_mkdir, .unlink = op_unlink,
    .rmdir = op_rmdir, .rename = op_rename,
  };
  argv[1] = argv[0];
  return fuse_main(argc - 1, argv + 1, &ops, NULL);
}
