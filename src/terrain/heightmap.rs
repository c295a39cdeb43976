//! Heightmap import (placeholder while being written).
