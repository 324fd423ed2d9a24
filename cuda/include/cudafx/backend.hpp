// Where an op runs.
#pragma once

namespace cudafx {

enum class Backend { Cpu, Cuda };

}  // namespace cudafx
