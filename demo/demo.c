/* The bundled demo: a small program with call chains worth looking at.
 *
 * It "renders" frames: each frame blurs an image (hot, deep in the chain),
 * sorts its pixels for a histogram (time in libc's qsort, calling back into
 * us) and checksums the result.  Built with -O2 and without frame pointers,
 * so only DWARF unwinding gets its stacks right.  */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define W 256
#define H 256

static volatile uint64_t sink;

__attribute__ ((noinline)) static void
blur_row (const uint8_t *in, uint8_t *out, int y)
{
  for (int x = 1; x < W - 1; x++)
    {
      int sum = 0;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
          sum += in[(y + dy) * W + x + dx];
      out[y * W + x] = sum / 9;
    }
}

__attribute__ ((noinline)) static void
blur (const uint8_t *in, uint8_t *out)
{
  for (int y = 1; y < H - 1; y++)
    blur_row (in, out, y);
}

static int
compare_pixels (const void *a, const void *b)
{
  return *(const uint8_t *) a - *(const uint8_t *) b;
}

__attribute__ ((noinline)) static void
histogram (const uint8_t *img, uint8_t *scratch)
{
  memcpy (scratch, img, W * H);
  qsort (scratch, W * H, 1, compare_pixels);
  sink += scratch[W * H / 2];
}

__attribute__ ((noinline)) static uint64_t
checksum (const uint8_t *img)
{
  uint64_t h = 1469598103934665603ULL;
  for (int i = 0; i < W * H; i++)
    h = (h ^ img[i]) * 1099511628211ULL;
  return h;
}

__attribute__ ((noinline)) static void
render_frame (uint8_t *a, uint8_t *b, uint8_t *scratch)
{
  blur (a, b);
  blur (b, a);
  histogram (a, scratch);
  sink += checksum (a);
}

int
main (int argc, char **argv)
{
  double seconds = argc > 1 ? atof (argv[1]) : 2.0;
  uint8_t *a = malloc (W * H), *b = calloc (W * H, 1), *scratch = malloc (W * H);
  if (a == NULL || b == NULL || scratch == NULL)
    return 1;
  for (int i = 0; i < W * H; i++)
    a[i] = (uint8_t) (i * 7919u >> 3);
  struct timespec start, now;
  clock_gettime (CLOCK_MONOTONIC, &start);
  unsigned frames = 0;
  do
    {
      render_frame (a, b, scratch);
      frames++;
      clock_gettime (CLOCK_MONOTONIC, &now);
    }
  while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
  printf ("demo: rendered %u frames in %.1f s\n", frames, seconds);
  free (a);
  free (b);
  free (scratch);
  return 0;
}
