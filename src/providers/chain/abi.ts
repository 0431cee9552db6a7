import { parseAbi } from 'viem';

/** ERC-721 transfers and ERC-4907 rentals of the collection. */
export const collectionEvents = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)',
  'event UpdateUser(uint256 indexed tokenId, address indexed user, uint64 expires)',
]);

export const totalSupplyAbi = parseAbi(['function totalSupply() view returns (uint256)']);

/** The delegate.xyz v2 registry's delegation events for wallets, contracts and ERC-721 tokens. */
export const registryEvents = parseAbi([
  'event DelegateAll(address indexed from, address indexed to, bytes32 rights, bool enable)',
  'event DelegateContract(address indexed from, address indexed to, address indexed contract_, bytes32 rights, bool enable)',
  'event DelegateERC721(address indexed from, address indexed to, address indexed contract_, uint256 tokenId, bytes32 rights, bool enable)',
]);
