"""Weight quantization with an optional distributed loader."""
