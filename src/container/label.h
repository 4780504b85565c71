/* How a sample's container is named in the output: the part of a
 * container (container.h) that a call chain carries to the sinks.  */
#pragma once

/* The container a sample's process ran in (NULL in a chain: the host).  */
struct st_container_label {
  const char *kind;         /* "podman", "flatpak" */
  const char *name;         /* container name or app id */
  const char *id;           /* container id or flatpak instance */
  const char *root_frame;   /* "[podman:NAME]": folded stacks' root */
};
