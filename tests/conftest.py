"""Shared test helpers: the skip used while the compiled core lacks run()."""

import pytest

from tcplab import _core

