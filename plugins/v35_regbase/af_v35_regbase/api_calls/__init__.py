"""The v35 RegBase ApiCalls: code generators for ImplGraph nodes on SoC 3510."""
