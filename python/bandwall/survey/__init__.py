"""`bandwall survey`: every node of an allocation measured alike, and the slow or odd ones named."""
