/* SPDX-License-Identifier: MIT */
/*
 * npu_daemon.h - the wire protocol between npu-daemon and its clients (libnpu's "unix:"
 * backend), documented in docs/daemon.md.
 *
 * A client connects to the daemon's UNIX stream socket; one connection is one open file of the
 * daemon's mock kernel driver. Every message is a fixed 16-byte header followed by `length`
 * payload bytes; all fields are little-endian (the protocol only runs between processes of one
 * host). The client sends HELLO first; the daemon answers HELLO with the version it speaks or
 * ERROR and closes. Then the client sends requests (IOCTL, MAP, STATUS) and the daemon answers
 * each with one reply carrying the request's `seq`; replies may come out of order (a WAIT is
 * answered when its job retires, while later requests are served).
 *
 * IOCTL carries the ioctl request number and the bytes of its argument struct (_IOC_SIZE of
 * the request); u64 user pointers inside the struct mean nothing in the daemon, so the bytes
 * they point at travel after the struct ("extra": the IN buffers in the request, the OUT
 * buffers in the reply, in the order of uapi/npu_ioctls.def — SUBMIT's drm_npu_bo_ref array,
 * QUERY's data, VERSION's strings). MAP asks for the memfd behind a BO's mmap offset; the
 * reply carries it as SCM_RIGHTS ancillary data, so the client maps the same pages as the
 * device: buffer contents never cross the socket.
 */
#ifndef NPU_DAEMON_H
#define NPU_DAEMON_H

#include <linux/types.h>

#if defined(__cplusplus)
extern "C" {
#endif

#define NPU_DAEMON_MAGIC 0x4455504eu /* the bytes "NPUD" read as a little-endian u32 */
/* 2: HELLO flags, shareable files, attaching; 3: STATUS with each client's credentials as the
 * kernel reports them (SO_PEERCRED), its jobs in flight and the limits (quotas) */
#define NPU_DAEMON_VERSION 3u

/* Largest payload of any message, both directions; longer messages are a protocol error. */
#define NPU_DAEMON_MAX_PAYLOAD (1u << 20)
/* Largest ioctl argument struct (every drm_npu_* struct is smaller). */
#define NPU_DAEMON_MAX_ARG 128u

/* Message types (npu_daemon_header.type). Replies are the request's type | REPLY. */
#define NPU_DAEMON_HELLO 1u  /* struct npu_daemon_hello -> struct npu_daemon_hello_reply */
#define NPU_DAEMON_IOCTL 2u  /* struct npu_daemon_ioctl + arg + extra -> npu_daemon_ioctl_reply */
#define NPU_DAEMON_MAP 3u    /* struct npu_daemon_map -> struct npu_daemon_map_reply + 1 fd */
#define NPU_DAEMON_STATUS 4u /* empty -> npu_daemon_status + npu_daemon_client[num_clients] */
#define NPU_DAEMON_REPLY 0x8000u
#define NPU_DAEMON_ERROR 0xffffu /* struct npu_daemon_error: the daemon closes after it */

struct npu_daemon_header {
  __u32 magic;   /* NPU_DAEMON_MAGIC */
  __u16 version; /* NPU_DAEMON_VERSION (HELLO: the highest the client speaks) */
  __u16 type;    /* NPU_DAEMON_* */
  __u32 length;  /* payload bytes after this header, <= NPU_DAEMON_MAX_PAYLOAD */
  __u32 seq;     /* chosen by the client, echoed in the reply */
};

/* HELLO flags (version 2; a version-1 HELLO is the first 8 bytes, flags 0). */
/* The HELLO carries one descriptor: the client's own end of this socket. The daemon notes
 * its identity (SO_COOKIE), so that a process holding that end later (a forked child, or any
 * process it was passed to) can ATTACH to this connection's file. */
#define NPU_DAEMON_HELLO_SHAREABLE (1u << 0)
/* The HELLO carries one descriptor: the client end of another connection to this daemon,
 * made SHAREABLE, which this process holds. Instead of opening a file, this connection
 * becomes a second channel to that connection's file: same handles, contexts and address
 * space. The file is closed when the last channel and the last copy of the original socket
 * are gone. ENOENT (in ERROR) when the descriptor is no such socket. */
#define NPU_DAEMON_HELLO_ATTACH (1u << 1)

struct npu_daemon_hello {
  __u32 min_version; /* the client speaks [min_version, header.version] */
  __u32 pid;         /* the client's pid, for logs and STATUS (not trusted for anything) */
  __u32 flags;       /* (version 2) NPU_DAEMON_HELLO_* */
  __u32 pad;         /* must be 0 */
};

struct npu_daemon_hello_reply {
  __u32 version;     /* the version both sides use from now on */
  __u32 client_id;   /* the daemon's number for this connection (logs, STATUS) */
  __u32 api_version; /* DRM_NPU_API_VERSION_MAJOR << 16 | MINOR of the daemon's driver */
  __u32 file_id;     /* (version 2) the driver file this connection is a channel of */
};

struct npu_daemon_ioctl {
  __u64 request;    /* DRM_IOCTL_NPU_* */
  __u32 arg_size;   /* == _IOC_SIZE(request), <= NPU_DAEMON_MAX_ARG */
  __u32 extra_size; /* SUBMIT: bo_count * sizeof(struct drm_npu_bo_ref) or 0; else 0 */
  /* followed by arg_size bytes of the argument, then extra_size bytes */
};

struct npu_daemon_ioctl_reply {
  __s32 ret;        /* 0 or -1, as ioctl(2) */
  __u32 err;        /* errno when ret is -1 */
  __u32 arg_size;   /* the argument struct as the driver left it (copied out on error too) */
  __u32 extra_size; /* QUERY: the bytes the driver wrote at @data; else 0 */
  /* followed by arg_size bytes, then extra_size bytes */
};

struct npu_daemon_map {
  __u64 offset; /* mmap offset from BO_INFO */
  __u64 length; /* bytes the client maps (at most the BO's size) */
  __u32 flags;  /* the client's mmap flags: must be MAP_SHARED or MAP_SHARED_VALIDATE */
  __u32 pad;
};

struct npu_daemon_map_reply {
  __s32 ret; /* 0: one fd (the BO's memfd, sealed against resizing) is attached; -1: none */
  __u32 err; /* errno when ret is -1 */
};

/* Bits of npu_daemon_client.flags (version 3). */
#define NPU_DAEMON_CLIENT_REALTIME (1u << 0) /* the client's file may create REALTIME contexts */

struct npu_daemon_client {
  __u32 client_id;
  __u32 pid;      /* the client process as the kernel reports it (SO_PEERCRED at connect) */
  __u32 bos;      /* BO handles the connection's file holds */
  __u32 contexts; /* contexts the connection's file holds */
  __u64 bo_bytes; /* bytes of those BOs */
  /* version 3 (a version 1-2 reply ends here: NPU_DAEMON_CLIENT_V2_SIZE bytes per client) */
  __u32 uid;            /* SO_PEERCRED */
  __u32 gid;            /* SO_PEERCRED */
  __u32 hello_pid;      /* the pid the client's HELLO claimed (logs only; not trusted) */
  __u32 jobs_in_flight; /* jobs of the file queued or running */
  __u32 flags;          /* NPU_DAEMON_CLIENT_* */
  __u32 pad;
};
#define NPU_DAEMON_CLIENT_V2_SIZE 24u

struct npu_daemon_status {
  __u32 num_clients; /* entries that follow (connections past HELLO) */
  __u32 pad;
  __u64 clients_served; /* connections accepted since the daemon started */
  __u64 bo_memory;      /* bytes of BO memory alive in the daemon (all clients, and jobs) */
  /* version 3 (a version 1-2 reply ends here: NPU_DAEMON_STATUS_V2_SIZE bytes) */
  __u64 bo_memory_limit;        /* the most BO memory the device holds, all clients */
  __u64 client_bo_memory_limit; /* the most one client may hold */
  __u32 client_contexts_limit;  /* contexts one client may hold */
  __u32 client_jobs_limit;      /* jobs one client may have in flight */
  __u32 client_size;            /* bytes of each npu_daemon_client that follows */
  __u32 pad2;
  /* followed by num_clients entries of client_size bytes (version 3) or
   * NPU_DAEMON_CLIENT_V2_SIZE bytes (versions 1-2): struct npu_daemon_client's prefix */
};
#define NPU_DAEMON_STATUS_V2_SIZE 24u

struct npu_daemon_error {
  __u32 err;         /* errno-style code: EPROTO, EPROTONOSUPPORT, EMSGSIZE, ... */
  char message[124]; /* NUL-terminated */
};

#if defined(__cplusplus)
}
#endif

#endif /* NPU_DAEMON_H */
