//===- TileStrategy.cpp - the host's register, cache and workgroup tiles ---===//
#include "Target/Host/TileStrategy.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

using namespace mlir;

namespace mlir::hexir {

// A lane-friendly tile for a vectorized dimension of extent `n`: the first of `preferred`
// (multiples of the vector length, largest first) that divides n, else the largest divisor of n
// up to the largest preferred size.
int64_t vectorTile(int64_t n, ArrayRef<int64_t> preferred) {
  for (int64_t p : preferred)
    if (p <= n && n % p == 0)
      return p;
  return largestDivisorAtMost(n, preferred.front());
}

// A loop interchange that nests `loop` outermost and keeps the others in order.
static SmallVector<int64_t> outermostFirst(unsigned loop, size_t numLoops) {
  SmallVector<int64_t> order = {loop};
  for (unsigned l = 0; l < numLoops; ++l)
    if (l != loop)
      order.push_back(l);
  return order;
}

// The row loop of a contraction's register tile: of its row (m) loops, the innermost that has
// more than one index (a 1x1 convolution's output columns ow, not its rows oh). Others, such
// as a batch dimension of 1 that B does not have, are walked one at a time. Not the longest:
// the choice must not change when workgroups cut the outer row loops into chunks, or when
// the columns are split into whole register tiles and the rest; resnet50's 56x56 1x1
// convolutions had the longest loop flip from ow (56 = 54 + 2 columns) to oh (56 rows) and
// back to ow (4-row chunks), and their tiles' sizes came from one choice and their loops from
// the other: rows of one vector, 24 GFLOP/s instead of 70.
std::optional<unsigned> rowLoop(const linalg::ContractionDimensions &dims, ArrayRef<int64_t> ranges) {
  std::optional<unsigned> row;
  for (unsigned m : dims.m)
    if (!row || ranges[m] > 1)
      row = m;
  return row;
}

// Accumulators of a register tile whose other operand is broadcast from memory into each FMA
// (a matmul's or convolution's inputs): 28 of AVX-512's 32 vector registers, two left for the
// weight vectors of a step and two spare; 16 kept 10-25% of the FMA throughput idle on
// squeezenet's 3x3 convolutions (an 11-wide row got 11 accumulators of one vector, now 22)
// and resnet50's 1x1 convolutions. AVX2: 12 of 16 (6 rows x 2 vectors, as BLIS's Haswell
// kernel), two for the weight vectors and one for the broadcast, which AVX2 cannot fold into
// the FMA; 8 left a Zen 3's two FMA pipes (latency 4) without slack, and ran matmuls at 50-60%
// of the FMA peak, 12 at 65-77%. Depthwise convolutions
// and poolings load a vector of inputs per column as well: 16 (28 was no faster there).
static int64_t broadcastAccumulators(int64_t lanes) { return lanes >= 16 ? 28 : 12; }

// The rows of a contraction's best register tile for its vectors per row: as many as the
// accumulators allow (14 rows of two AVX-512 vectors).
static int64_t bestTileRows(const KernelStrategy &s, int64_t lanes) {
  int64_t vectors = std::max<int64_t>(s.registers[s.dims.n.back()] / lanes, 1);
  return std::max<int64_t>(broadcastAccumulators(lanes) / vectors, 1);
}
static int64_t windowAccumulators(int64_t lanes) { return lanes >= 16 ? 16 : 8; }

// The cost per FMA of a convolution's register tile of `columns` x `vectors` accumulators:
// each reduction step loads a broadcast input per column and a filter vector per channel
// vector, and a load costs about as much as an FMA, plus about 8 FMAs of overhead per tile
// (as tileCost). squeezenet's 27-wide 3x3 layers ran at half the FMA peak in 27 columns of one
// vector (28 loads per 27 FMAs) and 20-25% faster in 9 columns of two (11 per 18).
static double broadcastTileCost(int64_t columns, int64_t vectors) {
  double fmas = static_cast<double>(columns * vectors);
  return 1.0 + static_cast<double>(columns + vectors + 8) / fmas;
}

// The register tile of a channels-last window op: `columns` output columns (a divisor of the
// output width; with `divisors` false, any count up to it: the tile a width with every
// divisor would get) x `channels` (a lane multiple dividing the channels), at most `budget`
// accumulators. Convolutions (`broadcast`): the cheapest by broadcastTileCost, so two vectors
// of channels whenever they divide (a 27-wide image: 9 columns of two vectors, a 13-wide one
// 13 of two); depthwise convolutions and poolings, which load a vector per column: the most
// accumulators, then the widest vectors.
static void chooseWindowTile(int64_t width, int64_t channels, int64_t lanes, int64_t budget,
                             ArrayRef<int64_t> channelTiles, int64_t &columnTile, int64_t &channelTile,
                             bool broadcast, bool divisors = true) {
  int64_t best = 0;
  double cheapest = 0.0;
  columnTile = 1;
  channelTile = vectorTile(channels, channelTiles);
  for (int64_t c : channelTiles) {
    if (c > channels || channels % c != 0)
      continue;
    int64_t vectors = std::max<int64_t>(c / lanes, 1), most = std::max<int64_t>(budget / vectors, 1);
    int64_t columns = divisors ? largestDivisorAtMost(width, most) : std::min(width, most);
    double cost = broadcastTileCost(columns, vectors);
    bool better = broadcast ? best == 0 || cost < cheapest : columns * vectors > best;
    if (better) {
      best = columns * vectors;
      cheapest = cost;
      columnTile = columns;
      channelTile = c;
    }
  }
}

// The channel tiles of window ops: convolutions up to two vectors, depthwise and pooling one.
static SmallVector<int64_t> windowChannelTiles(KernelKind kind, int64_t lanes) {
  if (kind == KernelKind::Conv)
    return {2 * lanes, lanes, lanes / 2, 4};
  return {lanes, lanes / 2, 4};
}

// Whether dot-group loop `g` of `op` multiplies int8 pairs (vpmaddwd) rather than VNNI's fours.
static bool int8Pairs(linalg::LinalgOp op, unsigned g) {
  return getElementTypeOrSelf(op.getDpsInputs()[0].getType()).isInteger(8) && op.getStaticLoopRanges()[g] == 2;
}

std::optional<KernelStrategy> chooseStrategy(linalg::LinalgOp op, int64_t lanes) {
  std::optional<KernelKind> kind = classifyKernel(op);
  if (!kind)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  KernelStrategy s;
  s.lanes = lanes;
  s.ranges = ranges;
  s.registers.assign(ranges.size(), 1);
  s.cache.assign(ranges.size(), 0);
  SmallVector<int64_t> laneTiles = {2 * lanes, lanes, lanes / 2, 4};
  if (*kind == KernelKind::Contraction) {
    FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
    s.kind = KernelKind::Contraction;
    s.dims = *dims;
    // Packed weights (PackMatmulWeights) have two column loops, panels and columns in a panel:
    // the inner one is vectorized, the panels are walked one at a time.
    unsigned n = dims->n.back(), k = dims->k[0];
    for (unsigned outer : ArrayRef<unsigned>(dims->n).drop_back())
      s.registers[outer] = 1;
    // Register tile: up to 14 rows x 2 vectors (28 accumulators with AVX-512; 6 x 2 of 16
    // registers with AVX2), or twice the rows of one vector (a 13-row classifier over 16-wide
    // panels gets 13 accumulators, not 1), reduction step 1.
    s.registers[n] = vectorTile(ranges[n], laneTiles);
    s.registers[k] = 1;
    // A dot-product group (int8 or bf16) is one 32-bit lane of each operand: whole in every tile.
    if (std::optional<unsigned> g = dotGroupLoop(op)) {
      s.registers[*g] = ranges[*g];
      s.int8Pairs = int8Pairs(op, *g);
    }
    int64_t vectorsPerRow = std::max<int64_t>(s.registers[n] / lanes, 1);
    if (std::optional<unsigned> m = rowLoop(*dims, ranges))
      s.registers[*m] = largestDivisorAtMost(ranges[*m], std::max<int64_t>(broadcastAccumulators(lanes) / vectorsPerRow, 1));
    // Packed weights: panels outside rows (as BLIS's loop around its microkernel), so one
    // panel's cache block (256 steps x 32 columns: 32 KiB) stays in L1 while every row tile of
    // A passes over it; rows outside panels re-read the whole 256 KiB block of B from L2 for
    // each row tile, four times the traffic of re-reading A's block per panel.
    if (dims->n.size() == 2)
      s.registerOrder = outermostFirst(dims->n[0], ranges.size());
    s.packsB = dims->n.size() == 2 && panelPackOf(op);
    return s;
  }
  // Channels-last windows: loops (n, oh, ow, f, kh, kw, c) for a convolution, (n, oh, ow, c,
  // kh, kw) for depthwise and pooling. Register tile: output columns x up to 2 vectors of
  // channels (at most 28 accumulators, 16 for depthwise and pooling); the window is walked one
  // tap at a time (depthwise: a whole row of taps).
  if (isa<linalg::Conv2DNhwcHwcfOp>(op)) {
    s.kind = KernelKind::Conv;
    chooseWindowTile(ranges[2], ranges[3], lanes, broadcastAccumulators(lanes), laneTiles, s.registers[2],
                     s.registers[3], /*broadcast=*/true);
    return s;
  }
  // The same with a packed filter: loops (n, oh, ow, p, fi, kh, kw, c), one panel p at a time.
  if (std::optional<linalg::ConvolutionDimensions> conv = packedConvDims(op)) {
    s.kind = KernelKind::Conv;
    s.packedFilter = true;
    s.channelLoop = 7;
    s.strides = llvm::to_vector_of<int64_t>(conv->strides);
    s.dilations = llvm::to_vector_of<int64_t>(conv->dilations);
    chooseWindowTile(ranges[2], ranges[4], lanes, broadcastAccumulators(lanes), laneTiles, s.registers[2],
                     s.registers[4], /*broadcast=*/true);
    // Dot-product groups (loop g): whole in every tile, as a contraction's.
    if (std::optional<unsigned> g = dotGroupConvLoop(op)) {
      s.registers[*g] = ranges[*g];
      s.dotGroups = true;
      s.int8Pairs = int8Pairs(op, *g);
    }
    return s;
  }
  if (isa<linalg::DepthwiseConv2DNhwcHwcOp, linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcSumOp>(op)) {
    s.kind = isa<linalg::DepthwiseConv2DNhwcHwcOp>(op) ? KernelKind::Depthwise : KernelKind::Pooling;
    chooseWindowTile(ranges[2], ranges[3], lanes, windowAccumulators(lanes), windowChannelTiles(s.kind, lanes),
                     s.registers[2], s.registers[3], /*broadcast=*/false);
    s.registers[5] = ranges[5];
    return s;
  }
  // Elementwise (all loops parallel, results written in loop order, inputs read through
  // projected permutations: broadcasts and transposes): rows of the innermost dimension, up to
  // four vectors long, vectorized as one vector op per row.
  if (*kind == KernelKind::Elementwise) {
    s.kind = KernelKind::Elementwise;
    s.registers.back() = rowTile(ranges.back(), lanes);
    return s;
  }
  // Reductions over outer dimensions (a global average pool over NHWC: sums of H x W rows of C
  // channels): vectorized along the output's innermost dimension, which every input reads
  // contiguously; as many vectors of it as fit in half the registers accumulate while the
  // reduction loops run one step at a time, so each input row is read once.
  // (KernelKind::Reduction.)
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  unsigned v = outMap.getDimPosition(outMap.getNumResults() - 1);
  s.kind = KernelKind::Reduction;
  int64_t tile = 0;
  for (int64_t t = lanes; t <= std::min<int64_t>(ranges[v], 8 * lanes); t += lanes)
    if (ranges[v] % t == 0)
      tile = t;
  s.registers[v] = tile ? tile : rowTile(ranges[v], lanes);
  return s;
}

// Cache tiles for a contraction inside one workgroup tile of shape `ranges`: blocks of up to
// 64 rows and 256 reduction steps (A block 64 KiB), each a multiple of the register tile, and
// of one panel of packed weights (32 KiB), or of 256 unpacked columns (B block 256 KiB).
void chooseCacheTiles(KernelStrategy &s, ArrayRef<int64_t> ranges) {
  const linalg::ContractionDimensions *dims = &s.dims;
  auto block = [&](unsigned d, int64_t target) {
    int64_t unit = std::max<int64_t>(s.registers[d], 1);
    int64_t t = unit * largestDivisorAtMost(ranges[d] / unit, std::max<int64_t>(target / unit, 1));
    s.cache[d] = t < ranges[d] ? t : 0;
  };
  // Where B is packed in the kernel, row blocks of up to 512 (its readers have at most 128
  // rows, see packsPanelsInKernel): each block of B is packed once per block of rows.
  if (std::optional<unsigned> m = rowLoop(*dims, s.ranges))
    block(*m, s.packsB ? 512 : 64);
  if (dims->n.size() == 2) {
    // Packed weights: one panel per block, walked outermost, then its reduction blocks, then
    // the row tiles (as BLIS's loops around its microkernel): the panel's block (256 steps x
    // 16 columns with AVX2, 16 KiB) stays in L1 while every row tile passes over it, and the
    // blocks of B follow each other in memory order, so each block prefetches the next one
    // (PrefetchStreams), across panels too.
    unsigned panels = dims->n[0];
    s.cache[panels] = ranges[panels] > 1 ? 1 : 0;
    if (s.packsB) {
      int64_t group = largestDivisorAtMost(ranges[panels], std::max<int64_t>(kPackedRowBytes / (ranges[dims->n.back()] * 4), 1));
      s.cache[panels] = group < ranges[panels] ? group : 0;
    }
    s.cacheOrder = outermostFirst(panels, ranges.size());
  } else {
    block(dims->n[0], 256);
  }
  // With AVX-512 the reduction stays whole where one panel of B over all of it is at most
  // 128 KiB (32-wide panels: K <= 1024), read from L2: then the accumulators start from the
  // initializer (zero, a bias) and end with the epilogue in registers, and the output is
  // written once, never filled first and re-read per block. On a Sapphire Rapids core GEMM
  // 512^3 went from 74% to 79% of the FMA peak, 256x1024x512 from 70% to 74%; a 32 KiB block
  // (256 steps) in its 48 KiB L1 saved less than the output's extra passes cost. AVX2's 16 KiB
  // blocks were measured on a Zen 3 (GEMM 512^3 at 89%) and keep 256 steps.
  unsigned n = dims->n.back(), k = dims->k[0];
  // (Not where B is packed in the kernel: its packed block lives on the stack, 32 KiB at most.)
  bool wholeReduction = dims->n.size() == 2 && s.lanes >= 16 && !s.packsB &&
                        ranges[k] * s.registers[n] * static_cast<int64_t>(sizeof(float)) <= 128 * 1024;
  if (!wholeReduction)
    block(k, s.packsB ? kPackedBlockBytes / kPackedRowBytes : 256);
}

// Register tiles of an op that only initializes its output (fill, copy, broadcast): rows of
// the innermost dimension, up to four vectors long.
SmallVector<int64_t> elementwiseRegisterTiles(ArrayRef<int64_t> ranges, int64_t lanes) {
  SmallVector<int64_t> sizes(ranges.size(), 1);
  if (!ranges.empty())
    sizes.back() = rowTile(ranges.back(), lanes);
  for (unsigned i = 0; i < ranges.size(); ++i)
    if (sizes[i] >= ranges[i])
      sizes[i] = 0;
  return sizes;
}


// Workgroups over the output dimensions with the most register tiles: one for a window op, the
// two largest for a contraction (rows and columns: a 128-row transformer matmul still gets
// enough workgroups, and each keeps its blocks of A and B in cache). Each dimension starts at
// chunks of its cache block (64 rows, 256 columns), then chunks grow until there are at most
// `wanted` workgroups, or shrink while there are fewer than 8 (enough to balance a few threads;
// more, smaller chunks cost a tenth of the single-thread speed of a 128-row matmul).
// Workgroups of a convolution over its output rows (oh) and its panels of output channels
// (packed: p; named: f in register tiles), r x p of them: each reads 1/p of the filter and
// about 1/r of the input, so r x p workgroups move about r * filter + p * input bytes. The
// split that moves the fewest with at least min(wanted, 8) workgroups (at most `wanted`):
// a 14x14x256 layer takes 8 panels over all rows (4.5 MB) rather than 14 rows that each read
// the whole 2.4 MB filter (33 MB, and two threads then share the L3's bandwidth). Panels are
// the slower index: consecutive workgroups share a filter panel. std::nullopt when a batch
// dimension above 1 needs a split of its own.
static std::optional<SmallVector<WorkgroupSplit>> chooseConvSplits(linalg::LinalgOp root, const KernelStrategy &s,
                                                                   AffineMap outMap, int64_t wanted) {
  if (s.ranges[0] != 1 || root.getNumDpsInputs() != 2)
    return std::nullopt;
  auto outDimOf = [&](unsigned loop) -> std::optional<unsigned> {
    for (unsigned d = 0; d < outMap.getNumResults(); ++d)
      if (auto dim = dyn_cast<AffineDimExpr>(outMap.getResult(d)); dim && dim.getPosition() == loop)
        return d;
    return std::nullopt;
  };
  std::optional<unsigned> rowDim = outDimOf(1), panelDim = outDimOf(3);
  if (!rowDim || !panelDim)
    return std::nullopt;
  auto bytes = [](Value v) {
    auto type = cast<ShapedType>(v.getType());
    return type.getNumElements() * static_cast<int64_t>(type.getElementTypeBitWidth() / 8);
  };
  double input = static_cast<double>(bytes(root.getDpsInputs()[0])),
         filter = static_cast<double>(bytes(root.getDpsInputs()[1]));
  int64_t rowUnits = s.ranges[1] / std::max<int64_t>(s.registers[1], 1),
          panelUnits = s.ranges[3] / std::max<int64_t>(s.registers[3], 1);
  int64_t floor = std::min<int64_t>(wanted, 8), bestR = 1, bestP = 1;
  double bestBytes = 0;
  bool bestMeetsFloor = false;
  for (int64_t r = 1; r <= rowUnits; ++r) {
    if (rowUnits % r != 0)
      continue;
    for (int64_t p = 1; p <= panelUnits; ++p) {
      if (panelUnits % p != 0 || r * p > wanted)
        continue;
      double moved = static_cast<double>(r) * filter + static_cast<double>(p) * input;
      bool meets = r * p >= floor;
      bool better = meets != bestMeetsFloor ? meets
                    : meets               ? moved < bestBytes || (moved == bestBytes && r * p > bestR * bestP)
                                          : r * p > bestR * bestP;
      if ((r == 1 && p == 1) || better) {
        bestR = r, bestP = p, bestBytes = moved, bestMeetsFloor = meets;
      }
    }
  }
  SmallVector<WorkgroupSplit> splits;
  if (bestP > 1)
    splits.push_back({*panelDim, (panelUnits / bestP) * std::max<int64_t>(s.registers[3], 1), bestP});
  if (bestR > 1)
    splits.push_back({*rowDim, (rowUnits / bestR) * std::max<int64_t>(s.registers[1], 1), bestR});
  return splits;
}

SmallVector<WorkgroupSplit> chooseSplits(linalg::LinalgOp root, const KernelStrategy &strategy, AffineMap outMap,
                                int64_t wanted) {
  if (strategy.kind == KernelKind::Conv)
    if (std::optional<SmallVector<WorkgroupSplit>> splits = chooseConvSplits(root, strategy, outMap, wanted))
      return *splits;
  struct Candidate {
    unsigned outDim, loop;
    int64_t units, unitsPerChunk;
  };
  SmallVector<Candidate> candidates;
  for (unsigned d = 0; d < outMap.getNumResults(); ++d) {
    auto dim = dyn_cast<AffineDimExpr>(outMap.getResult(d));
    if (!dim || !linalg::isParallelIterator(root.getIteratorTypesArray()[dim.getPosition()]))
      continue;
    unsigned loop = dim.getPosition();
    int64_t units = strategy.ranges[loop] / strategy.registers[loop];
    if (units > 1)
      candidates.push_back({d, loop, units, 1});
  }
  // B packed in the kernel: workgroups of panels only, where there are panels to split, so
  // that no two workgroups pack the same block of B.
  if (strategy.packsB && llvm::any_of(candidates, [&](const Candidate &c) { return c.loop == strategy.dims.n[0]; }))
    llvm::erase_if(candidates, [&](const Candidate &c) { return c.loop != strategy.dims.n[0]; });
  llvm::stable_sort(candidates, [](const Candidate &a, const Candidate &b) { return a.units > b.units; });
  candidates.resize(std::min<size_t>(candidates.size(), strategy.kind == KernelKind::Contraction ? 2 : 1));
  if (strategy.kind == KernelKind::Contraction) {
    const linalg::ContractionDimensions *dims = &strategy.dims;
    for (Candidate &c : candidates) {
      int64_t block = 1, elementsPerUnit = strategy.registers[c.loop];
      if (llvm::is_contained(dims->m, c.loop)) {
        // Rows: blocks of 64 rows. A row loop outside the register tile's (the output rows of
        // a 1x1 convolution over [oh, ow]) counts the rows of the m loops inside it: a 7x7
        // image is 49 rows, one block, not 7 chunks that each read all the weights.
        block = 64;
        for (unsigned m : dims->m)
          if (m > c.loop)
            elementsPerUnit *= strategy.ranges[m];
      } else if (llvm::is_contained(dims->n, c.loop)) {
        block = 256;
        if (dims->n.size() == 2 && c.loop == dims->n.front()) // panels: a unit is a whole panel
          elementsPerUnit = strategy.ranges[dims->n.back()];
      }
      c.unitsPerChunk = divisorAtLeast(c.units, block / std::max<int64_t>(elementsPerUnit, 1));
    }
  }
  auto count = [&] {
    int64_t w = 1;
    for (const Candidate &c : candidates)
      w *= c.units / c.unitsPerChunk;
    return w;
  };
  while (count() > wanted) {
    Candidate *most = nullptr;
    for (Candidate &c : candidates)
      if (c.unitsPerChunk < c.units && (!most || c.units / c.unitsPerChunk > most->units / most->unitsPerChunk))
        most = &c;
    if (!most)
      break;
    most->unitsPerChunk = divisorAtLeast(most->units, most->unitsPerChunk + 1);
  }
  // The largest chunks shrink first, but a contraction's row chunks not below the rows of its
  // best register tile while another dimension can shrink instead. A 1x1 convolution over a
  // 7x7 image (49 rows, 16 panels of 2048-deep weights) would get 7 chunks of 7 rows, each
  // reading the 4 MiB of weights and passing over each block of them with one 7-row register
  // tile (14 accumulators instead of 28); 8 chunks of 2 panels over all rows read the 392 KiB
  // of input 8 times, and 4 row tiles share each block of weights in L1.
  auto rowsBelowTile = [&](const Candidate &c, int64_t unitsPerChunk) {
    if (strategy.kind != KernelKind::Contraction || !llvm::is_contained(strategy.dims.m, c.loop))
      return false;
    int64_t rows = unitsPerChunk * strategy.registers[c.loop];
    for (unsigned m : strategy.dims.m)
      if (m > c.loop)
        rows *= strategy.ranges[m];
    return rows < bestTileRows(strategy, std::max<int64_t>(strategy.lanes, 1));
  };
  while (count() < std::min<int64_t>(wanted, 8)) {
    Candidate *next = nullptr;
    bool nextLoses = false;
    for (Candidate &c : candidates) {
      if (c.unitsPerChunk <= 1)
        continue;
      bool loses = rowsBelowTile(c, largestDivisorAtMost(c.units, c.unitsPerChunk - 1));
      if (!next || (nextLoses && !loses) || (loses == nextLoses && c.unitsPerChunk > next->unitsPerChunk)) {
        next = &c;
        nextLoses = loses;
      }
    }
    if (!next)
      break;
    next->unitsPerChunk = largestDivisorAtMost(next->units, next->unitsPerChunk - 1);
  }
  SmallVector<WorkgroupSplit> splits;
  for (const Candidate &c : candidates)
    if (c.units / c.unitsPerChunk > 1)
      splits.push_back({c.outDim, c.unitsPerChunk * strategy.registers[c.loop], c.units / c.unitsPerChunk});
  llvm::sort(splits, [](const WorkgroupSplit &a, const WorkgroupSplit &b) { return a.outDim < b.outDim; });
  // Workgroups are numbered with the first split slowest; one invocation runs consecutive ones.
  // Rows fastest, the chunks of rows sharing one block of B follow each other and B is read
  // from memory once (A once per column chunk); columns fastest, A is read once and B once per
  // row chunk. The order that moves fewer bytes wins (a transformer's 128-row matmuls read
  // their 9 MB of weights once, not twice).
  if (strategy.kind == KernelKind::Contraction && splits.size() == 2) {
    const linalg::ContractionDimensions &dims = strategy.dims;
    auto extent = [&](ArrayRef<unsigned> loops) {
      int64_t e = 1;
      for (unsigned l : loops)
        e *= strategy.ranges[l];
      return e;
    };
    int64_t a = extent(dims.m) * extent(dims.k), b = extent(dims.n) * extent(dims.k);
    std::optional<unsigned> row = rowLoop(dims, strategy.ranges);
    auto isRows = [&](const WorkgroupSplit &split) {
      auto dim = cast<AffineDimExpr>(outMap.getResult(split.outDim));
      return row && llvm::is_contained(dims.m, dim.getPosition());
    };
    WorkgroupSplit rows = isRows(splits[0]) ? splits[0] : splits[1], cols = isRows(splits[0]) ? splits[1] : splits[0];
    if (a * cols.count + b <= a + b * rows.count)
      splits = {cols, rows};
    else
      splits = {rows, cols};
  }
  return splits;
}

// The cost of `rows` rows in register tiles of `tile` rows of `vectors` vectors, per vector of
// a row: a reduction step's FMAs plus an overhead of about 8 FMAs per tile (its loads and the
// loop), fitted to matmuls at 1, 8 and 14 rows of two vectors (33, 89 and 103 GFLOP/s).
static double tileCost(int64_t rows, int64_t tile, int64_t vectors) {
  return static_cast<double>(rows) * (1.0 + 8.0 / static_cast<double>(tile * vectors));
}
// The same for int8 pairs, in vector instructions: a vpmaddwd and an add per accumulator, a
// broadcast and a widening per row, a widening load per vector, the same overhead. Per step a
// 7-wide convolution's 7 x 1 tile spends 29 instructions (and the overhead) on 7 products
// where 6 x 2 spends 38 on 12: resnet50's layer4 3x3 convolutions ran 1.4x slower per product
// than layer3's 6 x 2 tiles.
static double pairTileCost(int64_t rows, int64_t tile, int64_t vectors) {
  double t = static_cast<double>(tile), v = static_cast<double>(vectors);
  return static_cast<double>(rows) * (2.0 * t * v + 2.0 * t + v + 8.0) / (t * v);
}

std::optional<RowTileSplit> splitRowTiles(const KernelStrategy &s, int64_t lanes) {
  // The row loop; the rows and vectors of its best register tile (`ideal` x `vectors`), and
  // those of the tile that the extent's divisors allowed.
  unsigned row;
  int64_t ideal = 0, vectors = 1, actualVectors = 1;
  int64_t budget = broadcastAccumulators(lanes);
  if (s.kind == KernelKind::Contraction) {
    std::optional<unsigned> m = rowLoop(s.dims, s.ranges);
    if (!m)
      return std::nullopt;
    row = *m;
    vectors = actualVectors = std::max<int64_t>(s.registers[s.dims.n.back()] / lanes, 1);
    ideal = bestTileRows(s, lanes);
  } else if (s.kind == KernelKind::Conv || s.kind == KernelKind::Depthwise || s.kind == KernelKind::Pooling) {
    // Output columns x channel vectors as chooseStrategy picks them, for a width with every
    // divisor.
    row = 2;
    unsigned channel = s.packedFilter ? 4 : 3;
    if (s.kind != KernelKind::Conv)
      budget = windowAccumulators(lanes);
    int64_t channelTile;
    chooseWindowTile(s.ranges[row], s.ranges[channel], lanes, budget, windowChannelTiles(s.kind, lanes), ideal,
                     channelTile, /*broadcast=*/s.kind == KernelKind::Conv, /*divisors=*/false);
    vectors = std::max<int64_t>(channelTile / lanes, 1);
    actualVectors = std::max<int64_t>(s.registers[channel] / lanes, 1);
  } else {
    return std::nullopt;
  }
  // Tiles compare by accumulators: with AVX2's 12, a 14-wide convolution's divisors allow 7
  // columns of one vector (7 accumulators, a broadcast per FMA) where 12 columns in tiles of 6
  // x 2 vectors and a 2 x 2 rest run 1.3x faster.
  int64_t extent = s.ranges[row], actual = s.registers[row];
  int64_t idealAccumulators = ideal * vectors, actualAccumulators = actual * actualVectors;
  if (ideal < 2 || extent <= ideal || actualAccumulators >= idealAccumulators)
    return std::nullopt;
  // (Depthwise and pooling tiles load a vector per column: wider ones did not run faster,
  // so only a poor tile is peeled.)
  if (s.kind != KernelKind::Contraction && s.kind != KernelKind::Conv && actualAccumulators * 2 > idealAccumulators)
    return std::nullopt;
  int64_t split = extent / ideal * ideal, rest = extent - split;
  auto cost = s.int8Pairs ? pairTileCost : tileCost;
  double whole = cost(extent, actual, actualVectors);
  double parts = cost(split, ideal, vectors) + (rest ? cost(rest, rest, vectors) : 0.0);
  if (rest == 0 || parts > 0.97 * whole)
    return std::nullopt;
  // int8 pairs: a split saving a tenth of the instructions is worth the weights' second pass
  // too (a quarter of f32's bytes): resnet50's 7-wide 3x3 convolutions in 6 x 2 and 1 x 2
  // tiles instead of 7 x 1 took 2.75 ms each instead of 3.8 on a Zen 2 (1 thread), its 1x1
  // stride-2 downsampling 2.25 instead of 3.1.
  bool poor = actualAccumulators * 2 <= idealAccumulators || (s.int8Pairs && parts < 0.9 * whole);
  return RowTileSplit{row, split, poor};
}

std::optional<RowRemainder> rowRemainder(linalg::LinalgOp root, const KernelStrategy &s, int64_t lanes) {
  std::optional<RowTileSplit> rows = splitRowTiles(s, lanes);
  if (!rows)
    return std::nullopt;
  // Each part streams the weights (the operands that do not depend on the rows) once: the
  // second pass is free while they stay in L2 (1 MiB), and worth it anyway where the
  // divisors left at most half the accumulators, unless all the rows of a contraction are one
  // cache block anyway (a 7x7 image's 49 pixels). Otherwise the cache blocks split their rows
  // instead (TileAndVectorize), which reads the weights once.
  int64_t weightBytes = 0;
  for (OpOperand *in : root.getDpsInputOperands()) {
    AffineMap map = root.getMatchingIndexingMap(in);
    auto type = dyn_cast<ShapedType>(in->get().getType());
    if (type && type.hasStaticShape() && !map.isFunctionOfDim(rows->loop))
      weightBytes += type.getNumElements() * std::max<int64_t>(type.getElementTypeBitWidth() / 8, 1);
  }
  if (weightBytes > (int64_t(1) << 20) &&
      (!rows->poor || (s.kind == KernelKind::Contraction && s.ranges[rows->loop] <= 64)))
    return std::nullopt;
  AffineMap outMap = root.getMatchingIndexingMap(root.getDpsInitOperand(0));
  for (unsigned d = 0; d < outMap.getNumResults(); ++d)
    if (auto dim = dyn_cast<AffineDimExpr>(outMap.getResult(d)); dim && dim.getPosition() == rows->loop)
      return RowRemainder{d, rows->split};
  return std::nullopt;
}

SmallVector<int64_t> collapsibleRows(linalg::LinalgOp op, const KernelStrategy &s, int64_t lanes) {
  if (s.kind != KernelKind::Contraction)
    return {};
  std::optional<unsigned> row = rowLoop(s.dims, s.ranges);
  if (!row)
    return {};
  int64_t ideal = bestTileRows(s, lanes);
  if (s.ranges[*row] >= ideal)
    return {};
  SmallVector<int64_t> loops = {*row};
  while (loops.front() > 0 && llvm::is_contained(s.dims.m, static_cast<unsigned>(loops.front() - 1)) &&
         s.ranges[loops.front() - 1] > 1)
    loops.insert(loops.begin(), loops.front() - 1);
  ReassociationIndices group(loops.begin(), loops.end());
  if (loops.size() < 2 || !linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), {group}))
    return {};
  return loops;
}

std::optional<FusedBlocks> fusedBlocks(linalg::LinalgOp root, const KernelStrategy &s, int64_t lanes,
                                       bool narrowing) {
  std::optional<KernelStrategy> chunk = chooseStrategy(root, lanes);
  if (!chunk || chunk->kind != s.kind)
    return std::nullopt;
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  SmallVector<int64_t> sizes = chunk->registers;
  ArrayRef<int64_t> loopOrder = chunk->registerOrder;
  bool registers = true;
  switch (s.kind) {
  case KernelKind::Contraction: {
    if (narrowing)
      break;
    KernelStrategy cache = *chunk;
    chooseCacheTiles(cache, ranges);
    if (cache.cache[cache.dims.k[0]] != 0) {
      // The reduction runs in cache blocks: the block of rows and columns around them.
      sizes = cache.cache;
      loopOrder = chunk->cacheOrder;
      registers = false;
      break;
    }
    // Rows peeled inside the chunk (splitRowTiles) keep their own tiles.
    if (splitRowTiles(*chunk, lanes))
      return std::nullopt;
    break;
  }
  case KernelKind::Conv:
    // Input channels beyond a cache block (TileAndVectorize) stay outside the output rows, so
    // that each block of the filter serves every row of the chunk: with the blocks inside each
    // row instead (the bias and activation one row at a time), 7x7 layers of 512 channels
    // streamed their filter once per row and ran 15-20% slower. Their chunk's passes are small.
    if (ranges[chunk->channelLoop] > convChannelBlock(lanes) && !narrowing)
      return std::nullopt;
    break;
  case KernelKind::Depthwise:
  case KernelKind::Pooling:
    break;
  default:
    return std::nullopt;
  }
  AffineMap outMap = root.getMatchingIndexingMap(root.getDpsInitOperand(0));
  SmallVector<int64_t> loops;
  if (loopOrder.empty())
    loops = llvm::to_vector(llvm::seq<int64_t>(0, ranges.size()));
  else
    loops.assign(loopOrder.begin(), loopOrder.end());
  FusedBlocks fused;
  fused.registers = registers;
  fused.blocks.assign(outMap.getNumResults(), 0);
  for (unsigned d = 0; d < outMap.getNumResults(); ++d) {
    auto dim = dyn_cast<AffineDimExpr>(outMap.getResult(d));
    if (!dim)
      return std::nullopt;
    unsigned loop = dim.getPosition();
    // (A narrowing chain's chunk whose rows the best tile does not divide, which splitRowTiles
    // would peel: its blocks take the largest tile that divides them. Kernels peel such rows
    // into parts before they are split into chunks, see rowRemainder, so this is rare.)
    if (sizes[loop] > 0 && sizes[loop] < ranges[loop])
      fused.blocks[d] = largestDivisorAtMost(ranges[loop], sizes[loop]);
  }
  for (int64_t loop : loops)
    for (unsigned d = 0; d < outMap.getNumResults(); ++d)
      if (cast<AffineDimExpr>(outMap.getResult(d)).getPosition() == loop)
        fused.order.push_back(d);
  return fused;
}

// Rows of the innermost dimension, up to four vectors long: the register tile of elementwise
// ops and of the ops that initialize an accumulator.
int64_t rowTile(int64_t extent, int64_t lanes) {
  return vectorTile(extent, {4 * lanes, 2 * lanes, lanes, lanes / 2, 4});
}

} // namespace mlir::hexir
